# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether this VM reaches every source the k3s target's online mode fetches
from, asked all at once before anything is installed (roles/k3s/tasks/
reachability.yml runs it with the VM's own Python, standard library only).

Argument: a JSON object with
  timeout: seconds for every address (they are asked in parallel; a name that
    does not resolve in that time is reported too);
  files: {what it is for: URL} of release files (k3s, Helm): answered when the
    file is there (HTTP status below 400, redirects followed);
  charts: chart references (oci://host/..., https://...): their registry or
    repository answered at all;
  images: image names (registry/repository:tag): their registry answered at
    all, through any endpoint of its mirror in `mirrors` (k3s's registries.yaml
    form, "*" for every registry) or directly, as containerd falls back;
  tls: {registry host: {ca_file, insecure_skip_verify}} as in k3s's configs.
Prints {"seconds": ..., "asked": N, "unreachable": [{"for": ..., "addresses":
[{"url": ..., "error": ...}]}]}: each need none of whose addresses answered.
"""

from __future__ import annotations

import json
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

# Docker Hub's registry is not at docker.io itself.
UPSTREAM = {"docker.io": "registry-1.docker.io"}


def _registry_url(endpoint):
    endpoint = endpoint if "://" in endpoint else "https://" + endpoint
    return endpoint.rstrip("/") + "/v2/"


def needs(settings):
    """[(what it is for, [(url, is_file)])]: each need, met when one URL answers."""
    out = [(what, [(url, True)]) for what, url in sorted((settings.get("files") or {}).items())]
    chart_urls = []
    for ref in settings.get("charts") or []:
        parsed = urllib.parse.urlsplit(ref)
        if parsed.scheme == "oci":
            chart_urls.append("https://%s/v2/" % parsed.netloc)
        elif parsed.scheme in ("http", "https"):
            chart_urls.append(ref.rstrip("/") + "/index.yaml")
    for url in sorted(set(chart_urls)):
        out.append(("the charts at %s" % urllib.parse.urlsplit(url).netloc, [(url, False)]))
    mirrors = settings.get("mirrors") or {}
    registries = sorted({image.split("/", 1)[0] for image in settings.get("images") or []})
    for registry in registries:
        mirror = mirrors.get(registry) or mirrors.get("*") or {}
        urls = [_registry_url(endpoint) for endpoint in mirror.get("endpoint") or []]
        upstream = _registry_url(UPSTREAM.get(registry, registry))
        urls += [upstream] if upstream not in urls else []
        out.append(("the images from %s" % registry, [(url, False) for url in urls]))
    return out


class _KeepHead(urllib.request.HTTPRedirectHandler):
    """Follow a redirect with HEAD still (GitHub sends release files elsewhere)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and req.get_method() == "HEAD":
            new.method = "HEAD"
        return new


def _context(url, tls):
    host = urllib.parse.urlsplit(url).netloc
    config = tls.get(host) or {}
    context = ssl.create_default_context(cafile=config.get("ca_file") or None)
    if config.get("insecure_skip_verify"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def ask(url, is_file, timeout, tls):
    """None when url answered as needed, else why not."""
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=_context(url, tls)), _KeepHead())
        request = urllib.request.Request(url, method="HEAD" if is_file else "GET",
                                         headers={"User-Agent": "gsb.kai_lab-reachability"})
        with opener.open(request, timeout=timeout) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except urllib.error.URLError as error:
        return str(error.reason)
    except (OSError, ValueError, ssl.SSLError) as error:
        return str(error) or type(error).__name__
    if is_file and status >= 400:
        return "HTTP %d: the file is not there" % status
    return None


def main(argv):
    settings = json.loads(argv[1])
    timeout = float(settings.get("timeout", 5))
    tls = settings.get("tls") or {}
    wanted = needs(settings)
    urls = {url: is_file for _, addresses in wanted for url, is_file in addresses}
    answers = {}

    def run(url):
        answers[url] = ask(url, urls[url], timeout, tls)

    start = time.monotonic()
    # Daemon threads: a name lookup that hangs past the deadline does not hold the exit.
    threads = [threading.Thread(target=run, args=(url,), daemon=True) for url in urls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, start + timeout + 1 - time.monotonic()))
    late = "no answer within %g s" % timeout
    unreachable = [{"for": what, "addresses": [{"url": url, "error": answers.get(url, late)} for url, _ in addresses]}
                   for what, addresses in wanted if all(answers.get(url, late) for url, _ in addresses)]
    print(json.dumps({"seconds": round(time.monotonic() - start, 1), "asked": len(urls), "unreachable": unreachable}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
