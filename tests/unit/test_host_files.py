# -*- coding: utf-8 -*-
"""host/files.py: the lab's own files (the gate's marker, the grader's record) are written whole,
stay root's in a directory someone else owns, and a failed write leaves the old file and no litter."""

import os

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.gate import marker
from ansible_collections.gsb.kai_lab.plugins.module_utils.host.files import write_private
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import store


def test_a_missing_directory_is_made_private_and_the_file_is_0600(tmp_path):
    path = tmp_path / "state" / "nested" / "record.json"
    assert write_private(str(path), '{"a": 1}\n') == str(path)
    assert path.read_text() == '{"a": 1}\n'
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "state" / "nested").stat().st_mode & 0o777) == "0o700"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own a file in another user's directory")
def test_root_keeps_its_file_in_a_directory_a_learner_owns(tmp_path):
    # learner/write.py's write_file gives such a file to the directory's owner; the lab's own files must not.
    os.chown(str(tmp_path), 1000, 1000)
    path = write_private(str(tmp_path / "grade-record.json"), "{}\n")
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (0, 0, 0o600)


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "marker.json"
    target.write_text("old\n")
    with pytest.raises(TypeError):
        write_private(str(target), b"bytes are not text")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marker.json"]


def test_the_gates_marker_and_the_record_are_written_through_it(tmp_path, monkeypatch):
    written = []
    import ansible_collections.gsb.kai_lab.plugins.module_utils.host.files as files

    def spy(path, text, *args, **kwargs):
        written.append(os.path.basename(path))
        return files.write_private(path, text, *args, **kwargs)

    monkeypatch.setattr(marker, "write_private", spy)
    monkeypatch.setattr(store, "write_private", spy)
    marker.write(str(tmp_path), "a" * 64, "2026-12-05T00:00:00Z")
    store.save(str(tmp_path / "records" / "kai-lab.json"), {"schema": 1})
    assert written == [os.path.basename(marker.marker_path(str(tmp_path))), "kai-lab.json"]
    assert marker.read(str(tmp_path))[0] == "a" * 64
