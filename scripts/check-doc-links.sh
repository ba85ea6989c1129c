#!/usr/bin/env bash
# Checks the documentation: every relative link in the repository's Markdown files (README.md, docs/, and the
# READMEs beside the code) names a file or directory that exists, and a `#fragment` names a heading of the page it
# points to (GitHub's anchors). Also checks that README.md still holds the two commands for a fresh machine, and
# that .ci/run runs the README's test command. Needs only python3; takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'EOF'
import os, re, sys

def markdown_files():
    for root, dirs, files in os.walk('.'):
        dirs[:] = sorted(d for d in dirs if not d.startswith('.') and d != 'node_modules')
        for name in sorted(files):
            if name.endswith('.md'):
                yield os.path.normpath(os.path.join(root, name))

def prose_lines(text):
    """The lines outside fenced code blocks, with inline code spans blanked (links there are not links)."""
    fence = None
    for number, line in enumerate(text.split('\n'), 1):
        stripped = line.lstrip()
        if fence is None and (stripped.startswith('```') or stripped.startswith('~~~')):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        yield number, re.sub(r'`[^`]*`', '``', line)

def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    heading = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', heading.strip())
    heading = re.sub(r'[^\w\- ]', '', heading.lower())
    return heading.replace(' ', '-')

anchors_cache = {}
def anchors(path):
    if path not in anchors_cache:
        seen, found = {}, set()
        fence = None
        for line in open(path, encoding='utf-8').read().split('\n'):
            stripped = line.lstrip()
            if fence is None and (stripped.startswith('```') or stripped.startswith('~~~')):
                fence = stripped[:3]
                continue
            if fence is not None:
                if stripped.startswith(fence):
                    fence = None
                continue
            match = re.match(r'#{1,6} (.*)', line)
            if match:
                base = slug(match.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f'{base}-{count}')
        anchors_cache[path] = found
    return anchors_cache[path]

problems = []
checked = 0
for path in markdown_files():
    text = open(path, encoding='utf-8').read()
    for number, line in prose_lines(text):
        for target in re.findall(r'\]\(([^)\s]+)(?:\s+"[^"]*")?\)', line):
            if re.match(r'[A-Za-z][A-Za-z0-9+.-]*:', target):
                continue  # https:, mailto:, file: ... are not checked here
            checked += 1
            file_part, _, fragment = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = f'{path}:{number}: ({target})'
            if not os.path.exists(dest):
                problems.append(f'{where}: no such file or directory {dest}')
            elif fragment and dest.endswith('.md') and fragment not in anchors(dest):
                problems.append(f'{where}: {dest} has no heading with the anchor #{fragment}')

# The README's two commands (the README promises them for a fresh Debian 12 machine; CI runs the second).
readme = open('README.md', encoding='utf-8').read().split('\n')
commands = [
    'scripts/install-deps.sh && swift run -c release farecheck daemon --demo',
    'scripts/install-deps.sh && swift build --build-tests && swift test --no-parallel',
]
for command in commands:
    if command not in readme:
        problems.append(f'README.md: the command line `{command}` is missing')
ci = open('.ci/run', encoding='utf-8').read().split('\n')
for step in ['bash scripts/install-deps.sh', 'swift build --build-tests', 'swift test --no-parallel']:
    # The step as a line of its own, its output perhaps piped or redirected (`swift build --build-tests 2>&1 | tee …`).
    if not any(line == step or line.startswith(step + ' ') for line in ci):
        problems.append(f'.ci/run: does not run `{step}`, part of the README\'s test command')

for problem in problems:
    print(problem, file=sys.stderr)
if problems:
    print(f'check-doc-links: {len(problems)} problem(s)', file=sys.stderr)
    sys.exit(1)
print(f'check-doc-links: {checked} links resolve; the README\'s two commands are there')
EOF
