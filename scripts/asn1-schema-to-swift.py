#!/usr/bin/env python3
"""Writes an ASN.1 module of the UIC (the subset FCB uses) as Swift schema data for farecheck's PER decoder.

Not part of the build: scripts/generate-fcb-schemas.sh runs it on the modules in scripts/fcb-asn1 (and formats the
output with `swift format`) to write Sources/TicketFormats/FCB/FCBSchemaV*.swift, and scripts/check-fcb-generated.sh
(run by CI) fails when the committed files differ from what it writes. Usage:
    asn1-schema-to-swift.py uicRailTicketData_v3.0.6.asn FCBSchemaV3 "FCB v3.0.6: ..." > FCBSchemaV3.swift
"""
import re, sys

src = open(sys.argv[1]).read()
enum_name = sys.argv[2]          # e.g. FCBSchemaV3
title = sys.argv[3]
src = re.sub(r'--.*?(--|$)', ' ', src, flags=re.M)
body = src[src.index('BEGIN') + 5: src.rindex('END')]
toks = re.findall(r'::=|\.\.\.|\.\.|[{}(),\[\]]|-?\d+|"[^"]*"|[A-Za-z][A-Za-z0-9_-]*', body)
pos = 0
def peek(k=0): return toks[pos + k] if pos + k < len(toks) else None
def take(expect=None):
    global pos
    t = toks[pos]; pos += 1
    if expect and t != expect: raise SystemExit(f'expected {expect} got {t} at {pos} {toks[pos-5:pos+5]}')
    return t

def parse_constraint():
    # after '(' consumed by caller? no: we are at '('
    take('(')
    if peek() == 'SIZE':
        take('SIZE'); take('(')
        lo = take()
        if peek() == '..':
            take('..'); hi = take()
        else: hi = lo
        take(')'); take(')')
        return ('size', int(lo), None if hi == 'MAX' else int(hi))
    lo = take()
    if peek() == '..':
        take('..'); hi = take()
    else: hi = lo
    take(')')
    return ('range', int(lo), None if hi == 'MAX' else int(hi))

def parse_type():
    t = take()
    if t == 'SEQUENCE' or t == 'SET':
        if peek() == '{': return ('seq',) + parse_components()
        size = None
        if peek() == '(':
            size = parse_constraint()
        if peek() == 'SIZE':
            take('SIZE'); take('('); lo = take(); hi = lo
            if peek() == '..': take('..'); hi = take()
            take(')'); size = ('size', int(lo), int(hi))
        take('OF')
        return ('seqof', parse_type(), size)
    if t == 'CHOICE':
        return ('choice',) + parse_components()
    if t == 'ENUMERATED':
        take('{'); names = []; ext = False; adds = []
        while peek() != '}':
            x = take()
            if x == ',': continue
            if x == '...': ext = True; continue
            if peek() == '(':
                take('('); take(); take(')')
            (adds if ext else names).append(x)
        take('}')
        return ('enum', names, ext, adds)
    if t == 'INTEGER':
        if peek() == '(':
            c = parse_constraint(); return ('int', c[1], c[2])
        return ('int', None, None)
    if t == 'BOOLEAN': return ('bool',)
    if t == 'NULL': return ('null',)
    if t in ('IA5String', 'UTF8String'):
        size = None
        if peek() == '(': size = parse_constraint()
        return ('ia5' if t == 'IA5String' else 'utf8', size)
    if t == 'OCTET':
        take('STRING'); size = None
        if peek() == '(': size = parse_constraint()
        return ('octets', size)
    if t == 'BIT':
        take('STRING'); size = None
        if peek() == '(': size = parse_constraint()
        return ('bits', size)
    if t == 'OBJECT':
        take('IDENTIFIER'); return ('oid',)
    if re.match(r'[A-Z]', t):
        c = None
        if peek() == '(': c = parse_constraint()
        return ('ref', t, c)
    raise SystemExit(f'unknown type token {t} at {toks[pos-5:pos+5]}')

def parse_components():
    take('{'); root = []; adds = []; ext = False
    while peek() != '}':
        if peek() == ',': take(); continue
        if peek() == '...': take(); ext = True; continue
        if peek() == '[':
            raise SystemExit('extension groups not handled')
        name = take()
        ty = parse_type()
        pres = ('req',)
        if peek() == 'OPTIONAL': take(); pres = ('opt',)
        elif peek() == 'DEFAULT':
            take(); v = take()
            pres = ('def', v)
        (adds if ext else root).append((name, ty, pres))
    take('}')
    return (root, ext, adds)

assigns = []
while pos < len(toks):
    name = take(); take('::=')
    assigns.append((name, parse_type()))
types = dict(assigns)

def lc(n):
    m = re.match(r'^([A-Z]+)([A-Z][a-z].*)$', n)
    if m and len(m.group(1)) > 1: return m.group(1).lower() + m.group(2)
    return n[0].lower() + n[1:]

def resolve(ty):
    while ty[0] == 'ref': ty = types[ty[1]]
    return ty

def swift_size(size):
    if size is None: return 'nil'
    return f'PERSize({size[1]}, {size[2] if size[2] is not None else "nil"})'

anon = []
def swift_type(ty, ctx):
    k = ty[0]
    if k == 'ref':
        if ty[2] is not None: raise SystemExit('constrained ref')
        if ty[1] == current[0]:
            recursions.add(ty[1])
            return f'.recursive({lc(ty[1])}Recursion)'
        return lc(ty[1])
    if k == 'int':
        if ty[1] is None: return '.unconstrainedInteger'
        return f'.integer({ty[1]}, {ty[2]})'
    if k == 'bool': return '.boolean'
    if k == 'null': return '.null'
    if k == 'ia5': return f'.ia5String({swift_size(ty[1])})'
    if k == 'utf8': return f'.utf8String({swift_size(ty[1])})'
    if k == 'octets': return f'.octetString({swift_size(ty[1])})'
    if k == 'bits': return f'.bitString({swift_size(ty[1])})'
    if k == 'seqof': return f'.sequenceOf({swift_type(ty[1], ctx + "Item")}, {swift_size(ty[2])})'
    if k in ('seq', 'choice', 'enum'):
        # anonymous inline type: declare it separately
        anon.append((ctx, ty))
        return lc(ctx)
    raise SystemExit(k)

def default_value(ty, v):
    r = resolve(ty)
    if r[0] == 'int': return f'.integer({int(v)})'
    if r[0] == 'enum':
        return f'.enumerated({r[1].index(v)})'
    if r[0] == 'ia5': return f'.text({v})'
    if r[0] == 'bool': return f'.boolean({v.lower()})'
    raise SystemExit(f'default {ty} {v}')

out = []
def emit(name, ty):
    k = ty[0]
    sname = lc(name)
    if k in ('seq', 'choice'):
        root, ext, adds = ty[1], ty[2], ty[3]
        def comps(cs):
            lines = []
            for (n, t, p) in cs:
                st = swift_type(t, name + n[0].upper() + n[1:])
                if p[0] == 'req': pr = None
                elif p[0] == 'opt': pr = '.optional'
                else: pr = f'.defaulted({default_value(t, p[1])})'
                lines.append(f'            PERComponent("{n}", {st}' + (f', {pr}' if pr else '') + '),')
            return lines
        cls = 'PERSequence' if k == 'seq' else 'PERChoice'
        case = 'sequence' if k == 'seq' else 'choice'
        out.append(f'    static let {sname}: PERType = .{case}(')
        out.append(f'        {cls}(')
        out.append(f'            "{name}", extensible: {"true" if ext else "false"},')
        out.append(f'            [')
        out.extend(['    ' + l for l in comps(root)])
        if adds:
            out.append(f'            ],')
            out.append(f'            additions: [')
            out.extend(['    ' + l for l in comps(adds)])
            out.append(f'            ]')
        else:
            out.append(f'            ]')
        out.append(f'        ))')
    elif k == 'enum':
        names = ', '.join(f'"{n}"' for n in ty[1])
        out.append(f'    static let {sname}: PERType = .enumerated(')
        out.append(f'        PEREnumeration("{name}", [{names}], extensible: {"true" if ty[2] else "false"}))')
    else:
        out.append(f'    static let {sname}: PERType = {swift_type(ty, name)}')

recursions = set()
current = [None]
for (n, t) in assigns:
    current[0] = n
    emit(n, t)
    if n in recursions:
        out.append(f'    /// `{n}` contains itself: its components refer to it through this.')
        out.append(f'    static let {lc(n)}Recursion = PERRecursion("{n}") {{ {lc(n)} }}')
    while anon:
        an, at = anon.pop(0)
        emit(an, at)

print(f'// {title}')
print('// Generated from the ASN.1 module of the same name (scripts/fcb-asn1) by scripts/generate-fcb-schemas.sh: one')
print('// static per type, in the order of the module, so that a reader can hold the two side by side. Do not edit;')
print('// CI (scripts/check-fcb-generated.sh) fails when this file differs from what the script writes.')
print()
print(f'/// The types of the module, as data for `PERDecoder`.')
print(f'enum {enum_name} {{')
print('\n'.join(out))
print('}')
