# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's text, in Korean and English, filled with the steps' names and numbers.

One source for the docs site's pages (docs/lab_pages.py), kai-lab task and
status (grading/cli_task.py) and the lab platforms' packages
(grading/platforms.py): the words are lab_text_en/lab_text_ko's, every name
and number lab_values' (read from the steps at each call). A text is a list
of nodes, rendered as Markdown (lab platforms), reStructuredText (the docs
site) or plain console lines:

  ('h', level, text)  a heading (1 the title)    ('p', text)   a paragraph
  ('ul', [texts])     a bulleted list            ('code', [lines])  shell lines
  ('raw', text)       passed as is (a platform's own markup)

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import unicodedata

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import gang, lab_text_en, lab_text_ko, lab_values, registry

LANGS = ('ko', 'en')
TEXTS = {'en': lab_text_en.TEXT, 'ko': lab_text_ko.TEXT}
INTRO = ('teaches', 'why', 'setting', 'how', 'mistakes')
# Inline code is written `like this` in the templates.
CODE = re.compile(r'(`[^`]+`)')


def words(lang):
    return TEXTS.get(lang) or TEXTS['en']


def joined(names, lang):
    """`a`, `b` and `c` (English) or `a`, `b`, `c` (Korean)."""
    items = ['`%s`' % name for name in names]
    word = words(lang)['and']
    if len(items) < 2 or word == ',':
        return ', '.join(items)
    return '%s %s %s' % (', '.join(items[:-1]), word, items[-1])


# Where the lab runs: the text states what differs there (TEXT['targets']); None, in the docs: every target's.
TARGETS = ('sim', 'k3s')


def form_of(kai_version):
    """The form of the steps on kai_version: None (the lab text's, the Job gang) or 'podgroup' (an explicit
    PodGroup, KAI before the Job gang: steps/gang.py); a version no profile covers is written as the text's."""
    try:
        return None if gang.job_gang_supported(kai_version) else 'podgroup'
    except kai_profiles.KaiProfileError:
        return None


class Lab(object):
    """The lab text for one lab: its language, namespace, workdir and KAI's namespace.

    kai_version: the KAI that runs, whose form of each step the text writes
    (None, the docs: the lab text's version, each other form after it under
    its own heading). target: 'sim' or 'k3s', whose facts the text adds
    (None: every target's).
    """

    def __init__(self, lang, namespace, workdir, kai_namespace, kai_version=None, target=None):
        self.lang = lang if lang in TEXTS else 'en'
        self.text = words(self.lang)
        self.kai_version = kai_version
        self.target = target if target in TARGETS else None
        self.form = form_of(kai_version) if kai_version else None
        found = lab_values.values(namespace, workdir, kai_namespace, kai_version)
        rows = found['queue_rows']
        for key, names in (('queue_names', [r['name'] for r in rows]), ('leaf_names', found['leaf_queues']),
                           ('parent_names', found['parent_queues']), ('train_names', found['train_pods']),
                           ('fraction_names', found['fraction_pods']), ('report_names', found['report_keys']),
                           ('gang_pod_names', found['gang_pod_list'])):
            found[key] = joined(names, self.lang)
        found['step_count_word'] = found['step_count_words'][self.lang]
        found['queue_items'] = [fill(self.text['queue_child' if r['parent'] else 'queue_root'], **r) for r in rows]
        self.values = found
        self.workdir = workdir

    def fill(self, template, **more):
        values = dict(self.values, **more) if more else self.values
        return fill(template, **values)

    def step_words(self, step_id, form=None):
        """A step's words in a form (None: the lab text's): the form's replace the text's, key by key."""
        found = dict(self.text['steps'][step_id])
        if form:
            found.update(self.text['forms'][form].get(step_id) or {})
        return found

    def other_forms(self, step_id):
        """The forms besides the one written whose words differ for this step (the docs show them all)."""
        if self.kai_version:
            return []
        return [form for form in sorted(self.text['forms']) if step_id in self.text['forms'][form]]

    def target_words(self, step_id):
        """What the target (every target, in the docs) adds to a step's task: blocks."""
        targets = [self.target] if self.target else TARGETS
        return [block for target in targets for block in (self.text['targets'].get(target) or {}).get(step_id, [])]

    def blocks(self, templates):
        nodes = []
        for block in templates:
            if isinstance(block, dict):
                nodes.append(('code', [self.fill(line) for line in block['code']]))
            elif isinstance(block, list):
                items = []
                for item in block:
                    items.extend(self.values[item[1:]] if item.startswith('*') else [self.fill(item)])
                nodes.append(('ul', items))
            else:
                nodes.append(('p', self.fill(block)))
        return nodes

    def heading(self, key):
        return self.fill(self.text['headings'][key])

    def title(self):
        return self.text['title']

    def teaser(self):
        """One sentence on the whole lab (a platform's description of it)."""
        return self.fill(self.text['teaser'])

    def step_title(self, step):
        return self.fill(self.text['step_title'], number=step.number, title=step.title[self.lang])

    def summary(self, step_id):
        """One sentence: what the step asks (kai-lab status names the next task with it)."""
        return self.fill(self.step_words(step_id, self.form)['summary'])

    def intro(self, level=2, parts=INTRO):
        nodes = []
        for part in parts:
            nodes.append(('h', level, self.heading(part)))
            nodes.extend(self.blocks(self.text[part]))
        return nodes

    def notes(self, level=2):
        return [('h', level, self.heading('notes'))] + self.blocks(self.text['notes'])

    def finish(self, level=2):
        return [('h', level, self.heading('finish'))] + self.blocks(self.text['finish'])

    def step(self, step_id, level=2, heading=True, check=True):
        """A step: its title, task, context, the files it asks for and how to check it."""
        step = registry.step(step_id)
        words_of_step = self.step_words(step_id, self.form)
        nodes = [('h', level, self.step_title(step))] if heading else []
        nodes.append(('h', level + 1, self.heading('task')))
        nodes.extend(self.blocks(words_of_step['task']))
        nodes.extend(self.blocks(self.target_words(step_id)))
        files = lab_values.step_files(step, self.workdir)
        if files:
            nodes.append(('p', self.fill(self.text['files'], files=', '.join('`%s`' % f for f in files))))
        nodes.append(('h', level + 1, self.heading('context')))
        nodes.extend(self.blocks(words_of_step['context']))
        for form in self.other_forms(step_id):
            other = self.step_words(step_id, form)
            nodes.append(('h', level + 1, self.fill(self.text['forms'][form]['heading'])))
            nodes.extend(self.blocks(other['task']))
            if other.get('context') is not None and other['context'] != words_of_step['context']:
                nodes.extend(self.blocks(other['context']))
        if check:
            nodes.append(('h', level + 1, self.heading('check')))
            nodes.append(('p', self.fill(self.text['check'], id=step.id)))
        return nodes

    def whole(self):
        """The whole lab text: title, what and why, the lab machine, the steps, the mistakes, the notes."""
        nodes = [('h', 1, self.title()), ('p', self.teaser())] + self.intro()
        for step in registry.STEPS:
            nodes.extend(self.step(step.id))
        return nodes + self.notes() + self.finish()


# ---------------------------------------------------------------- rendering

def width(text):
    """Columns text takes on a console (East Asian wide characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in ('W', 'F') else 1 for ch in text)


def segments(text):
    """(is_code, text) pieces of a line; code without its backticks."""
    return [(True, part[1:-1]) if CODE.match(part) else (False, part) for part in CODE.split(text) if part]


def md_inline(text):
    return ''.join('`%s`' % part if code else re.sub(r'([\\*_<>\[\]])', r'\\\1', part) for code, part in segments(text))


RST_BEFORE = ' \t\'"([{<-/:'
RST_AFTER = ' \t-.,:;!?\\/\'")]}>'


def rst_inline(text):
    """text with `code` as ``code``; a literal glued to a word (Korean particles) is joined with an escaped space."""
    out = []
    pieces = segments(text)
    for index, (code, part) in enumerate(pieces):
        if not code:
            out.append(re.sub(r'([\\*_|`])', r'\\\1', part))
            continue
        before = pieces[index - 1][1][-1:] if index else ''
        after = pieces[index + 1][1][:1] if index + 1 < len(pieces) else ''
        out.append('%s``%s``%s' % ('\\ ' if before and before not in RST_BEFORE else '', part,
                                   '\\ ' if after and after not in RST_AFTER else ''))
    return ''.join(out)


def plain_inline(text):
    return ''.join(part for _code, part in segments(text))


def markdown(nodes):
    out = []
    for node in nodes:
        kind = node[0]
        if kind == 'h':
            out.append('%s %s' % ('#' * node[1], node[2]))
        elif kind == 'p':
            out.append(md_inline(node[1]))
        elif kind == 'ul':
            out.append('\n'.join('- ' + md_inline(item) for item in node[1]))
        elif kind == 'code':
            out.append('```sh\n%s\n```' % '\n'.join(node[1]))
        else:
            out.append(node[1])
    return '\n\n'.join(out) + '\n'


RST_UNDERLINES = {1: '=', 2: '=', 3: '-', 4: '~'}


def rst(nodes):
    out = []
    for node in nodes:
        kind = node[0]
        if kind == 'h':
            line = RST_UNDERLINES[node[1]] * width(node[2])
            out.append('%s%s\n%s' % (line + '\n' if node[1] == 1 else '', node[2], line))
        elif kind == 'p':
            out.append(rst_inline(node[1]))
        elif kind == 'ul':
            out.append('\n'.join('- ' + rst_inline(item) for item in node[1]))
        elif kind == 'code':
            out.append('.. code:: sh\n\n%s' % '\n'.join('   ' + line for line in node[1]))
        else:
            out.append(node[1])
    return '\n\n'.join(out) + '\n'


def plain(nodes):
    """Console lines: headings underlined, code indented, no markup."""
    out = []
    for node in nodes:
        kind = node[0]
        if kind == 'h':
            out.append('%s\n%s' % (node[2], ('=' if node[1] == 1 else '-') * width(node[2])))
        elif kind == 'p':
            out.append(plain_inline(node[1]))
        elif kind == 'ul':
            out.append('\n'.join('  - ' + plain_inline(item) for item in node[1]))
        elif kind == 'code':
            out.append('\n'.join('    ' + line for line in node[1]))
        else:
            out.append(node[1])
    return '\n\n'.join(out) + '\n'
