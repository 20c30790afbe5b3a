# An allocation-heavy Python workload for the symbolization benchmark:
# many code paths through the interpreter (dicts, lists, strings, bytes,
# json, regular expressions, sorting, classes), so its capture holds tens of
# thousands of distinct frames.
import json
import re
import collections

class Node:
    def __init__(self, key, value):
        self.key = key
        self.value = value
        self.children = []

def build(depth, width):
    root = Node("root", 0)
    frontier = [root]
    for d in range(depth):
        nxt = []
        for n in frontier:
            for w in range(width):
                c = Node(f"{n.key}/{d}.{w}", d * w)
                n.children.append(c)
                nxt.append(c)
        frontier = nxt
    return root

def walk(n, out):
    out.append({"k": n.key, "v": n.value, "n": len(n.children)})
    for c in n.children:
        walk(c, out)

words = collections.Counter()
for round_ in range(6):
    tree = build(5, 6)
    rows = []
    walk(tree, rows)
    text = json.dumps(rows)
    back = json.loads(text)
    for m in re.finditer(r'"k": "([^"]+)"', text):
        words[m.group(1).split("/")[-1]] += 1
    blob = bytearray(text.encode())
    blob.extend(b"x" * 1000)
    s = sorted(back, key=lambda r: (r["n"], r["k"]))
    t = {r["k"]: r for r in s}
    del tree, rows, text, back, blob, s, t
print(len(words))
