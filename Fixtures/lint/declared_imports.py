#!/usr/bin/env python3
"""Every module a target imports is one it declares (issue 50: "every import is declared").

SwiftPM builds a target that imports a module another of its dependencies happens to pull in,
so an undeclared import works until that other dependency goes. This reads the package's
manifest (`swift package dump-package`) and every Swift file of each target, and names each
import of one of the package's own modules, or of a product it depends on, that the target
does not declare. Exit status 1 when there is one.
"""
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMPORT = re.compile(r'\s*(?:@testable\s+|@_spi\(\w+\)\s+|(?:public|package|internal)\s+)*import\s+'
                    r'(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)')


def main():
    manifest = json.loads(subprocess.check_output(['swift', 'package', 'dump-package'], cwd=ROOT))
    targets = {target['name']: target for target in manifest['targets']}
    products = {dependency['product'][0] for target in manifest['targets']
                for dependency in target['dependencies'] if 'product' in dependency}
    problems = []
    for name, target in sorted(targets.items()):
        declared = set()
        for dependency in target['dependencies']:
            for kind in ('byName', 'target', 'product'):
                if kind in dependency:
                    declared.add(dependency[kind][0])
        path = target.get('path') or os.path.join('Tests' if target['type'] == 'test' else 'Sources', name)
        for file in sorted(glob.glob(os.path.join(ROOT, path, '**', '*.swift'), recursive=True)):
            with open(file, encoding='utf-8') as source:
                for number, line in enumerate(source, 1):
                    match = IMPORT.match(line)
                    if not match:
                        continue
                    module = match.group(1)
                    if module != name and (module in targets or module in products) and module not in declared:
                        problems.append(f'{os.path.relpath(file, ROOT)}:{number}: {name} imports {module} '
                                        f'without declaring it in Package.swift')
    for problem in problems:
        print(problem)
    print(f'declared imports: {len(targets)} targets, {len(problems)} undeclared import(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
