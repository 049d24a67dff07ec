#!/usr/bin/python3
"""Compares three decoders of the spray headers field by field on one capture: `spraynic decode --json` (the
product), spray_scapy.py and spray.lua through tshark (both written from docs/PROTOCOL.md alone).

    /usr/bin/python3 tools/decoders/compare_decoders.py --java DECODE.jsonl --capture FILE [--protocol docs/PROTOCOL.md]
                     [--require-every-field]

Fields are those of PROTOCOL.md's layout tables (`<!-- layout: NAME -->`), named `<header>.<field>`, plus the
BTH, the reason (`error`), the payload length and the ICRC. Every frame whose BTH opcode is in 0xC0-0xDF is
compared. First checks that scapy's layers have exactly the fields of the tables (tshark refuses a field the
Lua dissector does not register); with --require-every-field, also that every decoder showed every field in
some frame. The Lua dissector's malformed-packet expert info must appear exactly on the frames with a reason.
Prints one JSON object: frames, sprayFrames, valuesCompared, malformed (frames with a reason), mismatches
(at most 50, each {frame, field, java, scapy, lua}), missingFields; exits 1 when anything disagrees.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import spray_scapy  # noqa: E402

BTH_KEYS = ['opcode', 'solicited', 'migReq', 'padCount', 'tver', 'pkey', 'destQp', 'ackReq', 'psn']
LUA_BTH = {'opcode': 'opcode', 'solicited': 'se', 'migReq': 'm', 'padCount': 'padCount', 'tver': 'tver',
           'pkey': 'pkey', 'destQp': 'destQp', 'ackReq': 'ackReq', 'psn': 'psn'}
HEURISTICS_OFF = ['rpcrdma_infiniband', 'iser_infiniband', 'sdp_infiniband', 'smb_direct_infiniband',
                  'smcr_infiniband', 'fc_infiniband', 'eth_over_ib', 'mellanox_eoib', 'lnet_ib', 'nvme_rdma',
                  'drbd_rdma']


def layouts(protocol_md):
    """{header: [(field, type)]} from the tables of PROTOCOL.md marked <!-- layout: NAME -->."""
    out = {}
    lines = open(protocol_md, encoding='utf-8').read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r'\s*<!-- layout: (\w+) -->', line)
        if not m or m.group(1) == 'opcodes':
            continue
        rows = []
        for row in lines[i + 3:]:
            cells = [c.strip() for c in row.strip().strip('|').split('|')]
            if not row.strip().startswith('|'):
                break
            rows.append((cells[2].strip('`'), cells[3]))
        out[m.group(1)] = rows
    return out


def flatten(spray):
    """The spray object of a decoder -> {'header.field': value or [values] for the address list}."""
    out = {}
    if spray is None:
        return out
    for header, fields in spray.items():
        if header == 'name':
            out['name'] = fields
        elif header == 'addresses':
            for entry in fields:
                for name, value in entry.items():
                    out.setdefault('address.' + name, []).append(value)
        else:
            for name, value in fields.items():
                out[header + '.' + name] = value
    return out


def lua_value(text, kind):
    if kind == 'bytes':
        return text.replace(':', '').lower()
    if kind == 'u64':
        return str(int(text, 0))
    if kind == 'bool':
        return text in ('1', 'True', 'true')
    return int(text, 0)


def run_tshark(capture, lua, columns):
    command = ['tshark', '-n', '-X', 'lua_script:' + lua, '-r', capture, '-T', 'fields', '-E', 'occurrence=a',
               '-E', 'separator=/t', '-E', 'aggregator=;']
    for heuristic in HEURISTICS_OFF:
        command += ['--disable-heuristic', heuristic]
    for column in columns:
        command += ['-e', column]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        sys.exit('tshark failed: ' + result.stderr)
    return [line.split('\t') for line in result.stdout.splitlines()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--java', required=True)
    parser.add_argument('--capture', required=True)
    parser.add_argument('--protocol', default=os.path.join(HERE, '..', '..', 'docs', 'PROTOCOL.md'))
    parser.add_argument('--require-every-field', action='store_true')
    args = parser.parse_args()
    lua = os.path.join(HERE, 'spray.lua')

    tables = layouts(args.protocol)
    types = {h + '.' + f: t for h, rows in tables.items() for f, t in rows}
    problems = []
    # each decoder knows exactly the fields of the tables
    scapy_known = {spray_scapy.JSON_NAMES[cls] + '.' + name
                   for cls in spray_scapy.JSON_NAMES for name, _, _, _ in spray_scapy.layout(cls)}
    if scapy_known != set(types):
        problems.append({'scapyFieldsNotInTables': sorted(scapy_known - set(types)),
                         'tableFieldsNotInScapy': sorted(set(types) - scapy_known)})
    # the Lua dissector's fields: tshark refuses to run (below) when one of the tables' is not registered
    java = [json.loads(line) for line in open(args.java, encoding='utf-8')]
    from scapy.utils import PcapReader
    with PcapReader(args.capture) as reader:
        scapy = [spray_scapy.decode(i, bytes(pkt)) for i, pkt in enumerate(reader)]
    header_columns = sorted(types)
    columns = (['frame.number', 'spray.error', 'spray.name', 'spray.payload_length', 'spray.icrc', 'spray.icrc_valid',
                '_ws.malformed'] + ['spray.bth.' + LUA_BTH[k] for k in BTH_KEYS] +
               ['spray.' + c for c in header_columns] + ['spray.seth.attempt'])
    rows = run_tshark(args.capture, lua, columns)
    if not (len(java) == len(scapy) == len(rows)):
        sys.exit('frame counts differ: java %d, scapy %d, tshark %d' % (len(java), len(scapy), len(rows)))

    mismatches = []
    seen = set()
    compared = 0
    spray_frames = 0
    malformed = 0
    for i, (j, s, row) in enumerate(zip(java, scapy, rows)):
        if j.get('opcode') is None or not 0xC0 <= j['opcode'] <= 0xDF:
            continue
        spray_frames += 1
        t = dict(zip(columns, row + [''] * (len(columns) - len(row))))
        jv = {'error': j['error'], 'payloadLength': j['payloadLength'], 'icrc': j['icrc'], 'icrcValid': j['icrcValid']}
        jv.update({k: j[k] for k in BTH_KEYS})
        jv.update(flatten(j['spray']))
        sv = {k: s.get(k) for k in ['error', 'payloadLength', 'icrc', 'icrcValid'] + BTH_KEYS}
        sv.update(flatten(s['spray']))
        tv = {'error': t['spray.error'] or None, 'name': t['spray.name'] or None,
              'payloadLength': int(t['spray.payload_length']) if t['spray.payload_length'] else None,
              'icrc': lua_value(t['spray.icrc'], 'bytes') or None,
              'icrcValid': lua_value(t['spray.icrc_valid'], 'bool') if t['spray.icrc_valid'] else None}
        for k in BTH_KEYS:
            text = t['spray.bth.' + LUA_BTH[k]]
            tv[k] = lua_value(text, 'bool' if k in ('solicited', 'migReq', 'ackReq') else 'u8') if text else None
        for c in header_columns:
            text = t['spray.' + c]
            if not text:
                continue
            values = [lua_value(v, types[c]) for v in text.split(';')]
            tv[c] = values if c.startswith('address.') else values[0]
        # the Lua dissector's malformed-packet expert info, when and only when the packet is malformed
        if bool(t['_ws.malformed']) != bool(j['error']):
            mismatches.append({'frame': i, 'field': '_ws.malformed', 'java': j['error'], 'lua': t['_ws.malformed']})
        malformed += 1 if j['error'] else 0
        # the Lua dissector's SETH attempt (S4.1: flags bits 2-4) is that of the flags byte the others decoded
        if 'seth.flags' in sv and t['spray.seth.attempt'] != str((sv['seth.flags'] >> 2) & 7):
            mismatches.append({'frame': i, 'field': 'seth.attempt', 'scapy': sv['seth.flags'],
                               'lua': t['spray.seth.attempt']})
        # Java's own RETH and immediate keys agree with its spray headers
        if 'reth.va' in jv and j['rethVa'] != jv['reth.va']:
            mismatches.append({'frame': i, 'field': 'rethVa', 'java': j['rethVa'], 'spray': jv['reth.va']})
        if 'immdt.immediate' in jv and j['immediate'] != jv['immdt.immediate']:
            mismatches.append({'frame': i, 'field': 'immediate', 'java': j['immediate']})
        for key in sorted(set(jv) | set(sv) | set(tv)):
            a, b, c = jv.get(key), sv.get(key), tv.get(key)
            compared += 1
            for decoder, value in (('java', a), ('scapy', b), ('lua', c)):
                if value is not None and '.' in key:
                    seen.add((decoder, key))
            if not (a == b == c):
                mismatches.append({'frame': i, 'field': key, 'java': a, 'scapy': b, 'lua': c})
    missing = sorted(d + ':' + k for d in ('java', 'scapy', 'lua') for k in types
                     if (d, k) not in seen) if args.require_every_field else []
    report = {'frames': len(java), 'sprayFrames': spray_frames, 'valuesCompared': compared, 'malformed': malformed,
              'mismatches': mismatches[:50], 'mismatchCount': len(mismatches), 'missingFields': missing,
              'fieldProblems': problems}
    print(json.dumps(report, separators=(',', ':')))
    sys.exit(1 if mismatches or missing or problems else 0)


if __name__ == '__main__':
    main()
