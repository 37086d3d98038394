"""Checks heapwire's JSON and encode output against the official protobuf library.

usage: jsoncheck.py DESCRIPTOR_SET TYPE print|parse|parse-ignore  < lines

print: each input line is a JSON array [wire_hex, our_json, our_encoded_hex]; prints
  OK, or DIFF/PYERR/ENC with details. Values are compared after json.loads (key order
  and number spelling aside); "EXACT" counts lines whose compact text is identical.
parse: each line is [json_text, our_wire_hex_or_null]; prints OK when both reject or
  both accept with the same message, else MISMATCH with details. parse-ignore: the same
  with the official parser's ignore_unknown_fields.
"""
import json, sys
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, json_format

fds = descriptor_pb2.FileDescriptorSet.FromString(open(sys.argv[1], 'rb').read())
pool = descriptor_pool.DescriptorPool()
for f in fds.file:
    pool.Add(f)
M = message_factory.GetMessageClass(pool.FindMessageTypeByName(sys.argv[2]))
mode = sys.argv[3]


def drop_empty_extension_lists(v):
    """The known difference (README "Extensions", as in the differential suite): upb
    prints a repeated extension seen on the wire with no elements kept (e.g. only
    unknown closed-enum values) as [], heapwire prints nothing, as for a field."""
    if isinstance(v, dict):
        return {k: drop_empty_extension_lists(x) for k, x in v.items()
                if not (k.startswith('[') and k.endswith(']') and x == [])}
    if isinstance(v, list):
        return [drop_empty_extension_lists(x) for x in v]
    return v

exact = 0
for line in sys.stdin:
    item = json.loads(line)
    if mode == 'print':
        wire, ours, enc = bytes.fromhex(item[0]), item[1], bytes.fromhex(item[2] or '')
        try:
            m = M.FromString(wire)
        except Exception as e:
            print('PYERR\t%s' % e)
            continue
        try:
            theirs = json_format.MessageToJson(m, indent=None)
        except Exception as e:
            print('OK' if ours is None else 'PYERR\tprint: %s' % e)
            continue
        if ours is None:
            print('DIFF\tofficial prints %s' % theirs)
            continue
        theirs = json.dumps(drop_empty_extension_lists(json.loads(theirs)))
        compact = json.dumps(json.loads(theirs), separators=(',', ':'), ensure_ascii=False)
        if json.loads(theirs) != json.loads(ours):
            print('DIFF\t%s\t%s' % (theirs, ours))
            continue
        exact += compact == ours
        if compact != ours and __import__("os").environ.get("JSONCHECK_SHOW"): sys.stderr.write("TEXT\t%s\n\t%s\n" % (compact, ours))
        m2 = M.FromString(enc)
        if m2.SerializeToString(deterministic=True) != m.SerializeToString(deterministic=True):
            print('ENC\t%s\t%s' % (m, m2))
            continue
        print('OK')
    else:
        text, ours = item[0], item[1]
        try:
            theirs = json_format.Parse(text, M(), ignore_unknown_fields=mode == 'parse-ignore').SerializeToString(deterministic=True)
        except Exception as e:
            theirs = None
            err = str(e).replace('\n', ' ')
        if ours is None and theirs is None:
            print('OK')
        elif ours is None:
            print('MISMATCH\tofficial accepts %s' % text)
        elif theirs is None:
            print('MISMATCH\tofficial rejects (%s): %s' % (err[:200], text))
        elif M.FromString(bytes.fromhex(ours)).SerializeToString(deterministic=True) != theirs:
            print('MISMATCH\tdifferent message for %s: ours %s' % (text, M.FromString(bytes.fromhex(ours))))
        else:
            print('OK')
sys.stderr.write('exact text matches: %d\n' % exact)
