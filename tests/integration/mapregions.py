"""mapregions.py PROGRAM_OUTPUT MAP_JSON - what `heapprof report --map --json`
says of tests/programs/mapregions, checked against the addresses the program
printed and its own /proc/self/maps; one line per fact, for
test_timeline.c to compare with the figures the program is known to have.
Exact figures are printed as they are; a figure allowed a tolerance is
printed as the check's outcome."""
import json
import sys

PAGE = 4096
HEAP_MAX = 64 << 20

text = open(sys.argv[1]).read()
head, maps_text = text.split("\nmaps\n", 1)
printed = {"small": [], "big": [], "thread": []}
for line in head.splitlines():
    kind, addr, size = line.split()
    printed[kind].append((int(addr), int(size)))
maps = []
for line in maps_text.splitlines():
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    maps.append((lo, hi, f[1], f[5] if len(f) > 5 else ""))

r = json.load(open(sys.argv[2]))
regions = r["regions"]


def region_of(addr):
    for i, g in enumerate(regions):
        if g["start"] <= addr < g["end"]:
            return i
    return None


def yes(b):
    return "yes" if b else "no"


def holder(g, function):
    h = [x for x in g["holders"] if x["function"] == function]
    return (h[0]["blocks"], h[0]["bytes"]) if h else (0, 0)


def listed(function, i):
    return sorted((b["address"], b["size"]) for b in r["blocks"]
                  if b["function"] == function and b["region"] == i)


def pages(blocks):
    return len({a // PAGE for a, _ in blocks})


# The brk heap: make_small's blocks, in the [heap] mapping.
ids = {region_of(a) for a, _ in printed["small"]}
i = ids.pop() if len(ids) == 1 else None
g = regions[i] if i is not None else {}
heap = [(lo, hi) for lo, hi, _, name in maps if name == "[heap]"]
print("small: %d blocks in %d region, %s, the [heap] mapping: %s" % (
    len(printed["small"]), len(ids) + 1, g.get("kind"),
    yes(heap and (g.get("start"), g.get("end")) == heap[0])))
print("small: make_small holds %d blocks, %d bytes; they are the printed ones: %s" % (
    holder(g, "make_small") + (yes(listed("make_small", i) == sorted(printed["small"])),)))
print("small: RSS within the region, at least the pages holding blocks: %s" % yes(
    g and pages(printed["small"]) * PAGE <= g["rss_bytes"] <= g["size"]
    and g["rss_bytes"] % PAGE == 0))

# The two mmap'd chunks: one region each, from the chunk's header (16
# bytes before the block) to the end of its pages.
for name, (addr, size) in zip("AB", printed["big"]):
    i = region_of(addr)
    g = regions[i] if i is not None else {}
    print("big %s: %s region at the block - %d, %d bytes, %d block, %d in use, "
          "largest gap %d" % (
              name, g.get("kind"), addr - g.get("start", 0), g.get("size", 0),
              g.get("blocks", 0), g.get("inuse_bytes", 0), g.get("largest_gap_bytes", 0)))
# A's first 64 KiB written (its header's page among them): 64 KiB and a
# page, give or take a page; B written whole: all of it.
rss = [regions[region_of(a)]["rss_bytes"] if region_of(a) is not None else 0
       for a, _ in printed["big"]]
print("big A: RSS 64 KiB + a page, within a page: %s (%d); big B: RSS %d" % (
    yes(abs(rss[0] - (65536 + PAGE)) <= PAGE), rss[0], rss[1]))

# The second thread's arena: a 64 MiB aligned heap, its read-write part a
# mapping of its own, the rest of the 64 MiB reserved (---p).
ids = {region_of(a) for a, _ in printed["thread"]}
i = ids.pop() if len(ids) == 1 else None
g = regions[i] if i is not None else {}
rw = [m for m in maps if m[0] == g.get("start") and m[1] == g.get("end") and m[2] == "rw-p"]
reserved = [m for m in maps if m[0] == g.get("end") and m[2] == "---p"]
print("thread: %d blocks in %d region, %s, 64 MiB aligned: %s, the mapping's rw part: "
      "%s, reserved to 64 MiB: %s" % (
          len(printed["thread"]), len(ids) + 1, g.get("kind"),
          yes(g.get("start", 1) % HEAP_MAX == 0), yes(rw),
          yes(reserved and reserved[0][1] == g["start"] + HEAP_MAX)))
print("thread: make_threaded holds %d blocks, %d bytes; they are the printed ones: %s" % (
    holder(g, "make_threaded") + (yes(listed("make_threaded", i) == sorted(printed["thread"])),)))
print("thread: RSS within the region, at least the pages holding blocks: %s" % yes(
    g and pages(printed["thread"]) * PAGE <= g["rss_bytes"] <= g["size"]))

# Every region: inside one of the program's mappings, in address order,
# its figures consistent.
inside = all(any(lo <= g["start"] and g["end"] <= hi for lo, hi, _, _ in maps) for g in regions)
ordered = all(a["end"] <= b["start"] for a, b in zip(regions, regions[1:]))
frag = all(abs(g["fragmentation"] - max(0.0, 1 - g["inuse_bytes"] / g["rss_bytes"])) < 1e-4
           for g in regions if g["rss_bytes"])
sums = all(g["blocks"] == sum(1 for b in r["blocks"] if b["region"] == i)
           for i, g in enumerate(regions))
print("regions: inside a mapping: %s, in order: %s, blocks counted: %s, "
      "fragmentation = 1 - in use / RSS: %s, blocks outside: %d" % (
          yes(inside), yes(ordered), yes(sums), yes(frag), r["outside"]["blocks"]))
