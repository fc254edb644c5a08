"""The README and docs/ stay a guide that resolves inside the repository.

Every relative markdown link of README.md and docs/**/*.md must name a file or directory of
this repository (a reader of a clone or of the GitHub page follows it); absolute links may
only point at public upstream documentation; the README stays a short user's guide without a
dated journal; and no page points at an issue number that a reader cannot look up.
"""
import pathlib
import re
from urllib.parse import urlparse

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / 'README.md'
README_MAX_LINES = 300

# Public upstream projects whose documentation a page may cite; anything else (a lab's server,
# a personal page, a path on someone's machine) is not something every reader can open.
ALLOWED_HOSTS = {
    'github.com',
    'docs.ros.org',
    'control.ros.org',
    'design.ros2.org',
    'index.ros.org',
    'docs.ros2.org',
    'fast-dds.docs.eprosima.com',
    'numba.readthedocs.io',
    'numpy.org',
    'docs.scipy.org',
    'stack-of-tasks.github.io',
    'pypi.org',
    'doi.org',
}

FENCE = re.compile(r'^(```|~~~).*?^\1[^\n]*$', re.S | re.M)
CODE_SPAN = re.compile(r'(`+)(?:(?!\1).)+?\1', re.S)
# [text](target) and ![alt](target), target up to the first space or closing parenthesis
LINK = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
ISSUE = re.compile(r'\bissues?[ -]?#?\d+', re.I)
JOURNAL = re.compile(r'Found on 20\d\d')


def markdown_pages():
    return [README] + sorted((ROOT / 'docs').rglob('*.md'))


def prose(path):
    """The page without fenced code blocks and code spans: text there is code, not a link."""
    return CODE_SPAN.sub('', FENCE.sub('', path.read_text(encoding='utf-8')))


def links(path):
    return LINK.findall(prose(path))


def link_problem(page, target):
    """Why `target`, linked from `page`, does not resolve inside the repository (None if it does)."""
    parsed = urlparse(target)
    if parsed.scheme in ('http', 'https'):
        host = (parsed.hostname or '').lower()
        if host in ALLOWED_HOSTS or any(host.endswith('.' + h) for h in ALLOWED_HOSTS):
            return None
        return f'external link to {host!r}, not an allowed upstream documentation host'
    if parsed.scheme or parsed.netloc:
        return f'link with scheme {parsed.scheme!r}: only repository paths and upstream docs'
    path = parsed.path
    if not path:
        return None                     # an anchor on the same page
    if path.startswith('/'):
        return 'absolute file path: link relative to the page instead'
    resolved = (page.parent / path).resolve()
    try:
        resolved.relative_to(ROOT)
    except ValueError:
        return 'points outside the repository'
    if not resolved.exists():
        return 'no such file or directory in the repository'
    return None


def test_link_pattern_reads_plain_image_and_anchored_links():
    text = 'see [a](docs/x.md#part), ![fig](figures/f.png) and [b](https://docs.ros.org/en/kilted/)'
    assert LINK.findall(text) == ['docs/x.md#part', 'figures/f.png', 'https://docs.ros.org/en/kilted/']


def test_link_check_refuses_paths_outside_and_unknown_hosts():
    page = ROOT / 'docs' / 'CONTRACTS.md'
    assert link_problem(page, '../../shared/DESIGN.md') == 'points outside the repository'
    assert link_problem(page, '/work/shared/DESIGN.md').startswith('absolute file path')
    assert link_problem(page, 'https://example.com/x').startswith('external link')
    assert link_problem(page, 'no_such_page.md') == 'no such file or directory in the repository'
    assert link_problem(page, 'CONTRACTS.md#layout') is None


def test_every_link_resolves_inside_the_repository():
    problems = []
    for page in markdown_pages():
        for target in links(page):
            problem = link_problem(page, target)
            if problem:
                problems.append(f'{page.relative_to(ROOT)}: ({target}) {problem}')
    assert not problems, '\n'.join(problems)


def test_readme_is_a_short_guide_without_a_journal():
    lines = README.read_text(encoding='utf-8').splitlines()
    assert len(lines) <= README_MAX_LINES, f'README.md has {len(lines)} lines (at most {README_MAX_LINES})'
    dated = [f'README.md:{n}' for n, line in enumerate(lines, 1) if JOURNAL.search(line)]
    assert not dated, f'dated journal paragraphs belong in git history: {dated}'


def test_no_page_points_at_an_issue_number():
    found = []
    for page in markdown_pages():
        for n, line in enumerate(page.read_text(encoding='utf-8').splitlines(), 1):
            if ISSUE.search(line):
                found.append(f'{page.relative_to(ROOT)}:{n}: {line.strip()[:80]}')
    assert not found, 'say what the issue was about instead:\n' + '\n'.join(found)
