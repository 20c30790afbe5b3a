/*
 * flame_svg.c - writing the flame graph as one self-contained SVG (see
 * flame.h).
 *
 * Writing makes one pass to decide which nodes are drawn: a node is drawn
 * when its parent is and its value reaches the threshold, and since every
 * node comes after its parent in the array, index order is enough. Frames
 * are then written depth first, each child right of its larger siblings,
 * in the unzoomed layout, so the picture is right without the script; the
 * script (assets/flame.js, embedded at build time: assets.h) lays it out
 * again on zoom. The style sheet is assets/flame.css.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/units.h"
#include "assets/assets.h"
#include "flame_int.h"

/* --- text -------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at p that is an XML character,
 * or 0. */
static size_t utf8_char(const unsigned char *p, const unsigned char *end)
{
	size_t n;
	uint32_t cp;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if ((size_t)(end - p) < n)
		return 0;
	cp = p[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

/* Writes s[0..len) as XML text or attribute value: markup escaped, bytes
 * that are not valid UTF-8 or not XML characters as '?', line breaks and
 * tabs as spaces (names never need them). */
static void put_xml_n(FILE *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		size_t n;
		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		case '\t': case '\n': case '\r': putc(' ', out); break;
		default:
			if (*p >= 0x20 && *p < 0x7f) {
				putc(*p, out);
			} else if (*p >= 0x80 && (n = utf8_char(p, end))) {
				fwrite(p, 1, n, out);
				p += n;
				continue;
			} else {
				putc('?', out);
			}
		}
		p++;
	}
}

static void put_xml(FILE *out, const char *s)
{
	put_xml_n(out, s, strlen(s));
}

/* Writes s cut to max_chars characters ("..." at the end when cut), cut
 * on a UTF-8 boundary. */
static void put_xml_cut(FILE *out, const char *s, size_t max_chars, const char *dots)
{
	size_t len = strlen(s), k;

	if (len <= max_chars) {
		put_xml_n(out, s, len);
		return;
	}
	k = max_chars > strlen(dots) ? max_chars - strlen(dots) : 0;
	while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	put_xml_n(out, s, k);
	if (k)
		fputs(dots, out);
}

/* 1234567 as "1,234,567"; below 0 as 0. */
static const char *grouped(char *buf, size_t cap, double v)
{
	return hp_units_count(buf, cap, v < 0 ? 0 : v);
}

static const char *metric_unit(enum hp_metric metric)
{
	return metric == HP_METRIC_ALLOCATIONS ? "allocations"
	       : metric == HP_METRIC_TEMPORARY ? "temporary allocations"
					       : "B";
}

/* A figure with its unit: "1000 B", "48.8 KiB (50,000 B)", "1,000
 * allocations"; "~" before an estimate. */
static const char *figure(char *buf, size_t cap, const struct hp_flame *f, double v)
{
	const char *approx = f->m->sampled ? "~" : "";
	char g[48], b[128];

	if (!hp_metric_is_bytes(f->metric) || v < 1024)
		snprintf(buf, cap, "%s%s %s", approx, grouped(g, sizeof g, v), metric_unit(f->metric));
	else
		snprintf(buf, cap, "%s%s (%s B)", approx, hp_units_bytes(b, sizeof b, v),
			 grouped(g, sizeof g, v));
	return buf;
}

static const char *metric_title(enum hp_metric metric)
{
	static const char *const t[] = {"Peak heap", "Leaked", "Bytes allocated", "Allocations",
					"Temporary allocations"};
	return (unsigned)metric < HP_METRIC_COUNT ? t[metric] : "?";
}

static const char *metric_meaning(const struct hp_flame *f)
{
	switch (f->metric) {
	case HP_METRIC_PEAK: return "bytes in use at the peak of the heap";
	case HP_METRIC_LEAKED:
		return f->m->snap->reason == HP_SNAP_EXIT ? "bytes still in use at exit (leaked)"
							  : "bytes in use at the snapshot";
	case HP_METRIC_ALLOCATED: return "bytes allocated";
	case HP_METRIC_ALLOCATIONS: return "number of allocations";
	default: return "allocations freed before anything else was allocated";
	}
}

/* The objects behind a byte metric's total ("in N blocks"), or -1. */
static double total_objects(const struct hp_flame *f)
{
	const struct hp_values *t = &f->m->total;

	switch (f->metric) {
	case HP_METRIC_PEAK: return t->peak_objects;
	case HP_METRIC_LEAKED: return t->inuse_objects;
	case HP_METRIC_ALLOCATED: return t->alloc_objects;
	default: return -1;
	}
}

/* --- the SVG ----------------------------------------------------------- */

struct svg {
	FILE *out;
	const struct hp_flame *f;
	const uint8_t *drawn;
	double total, frame_w, bottom;
	int icicle;
	size_t emitted;
	char colour[64], fig[96]; /* scratch for write_frame, kept off its recursion */
	struct hp_frame_names *names; /* how each function is shown (frames.h) */
	const char *name;             /* the frame's name as shown, in names */
};

static int unnamed(const char *fn)
{
	return fn[0] == '?' || fn[0] == '[' || (fn[0] == '0' && fn[1] == 'x');
}

static const char *module_name(const struct hp_flame *f, int module)
{
	return module >= 0 && (size_t)module < f->m->nmodules ? f->m->modules[module].name : NULL;
}

static unsigned module_hue(const char *name)
{
	return (unsigned)(hp_hash_u64(hp_hash_str(HP_HASH_STR_SEED, name)) % 360);
}

/* A hue per module; the shade varies with the function so that
 * neighbours of one module stay apart. Inlined frames are pale; frames
 * without a name keep a hint of their module's hue. */
static void frame_colour(char *buf, size_t cap, const struct hp_flame *f, const struct node *n)
{
	const char *mod = module_name(f, n->module);
	/* (2166136261 is FNV's 32-bit seed: the shades of every flame graph
	 * drawn so far come from it.) */
	unsigned hue, shade = (unsigned)(hp_hash_str(2166136261u, n->function) % 14);

	if (n->parent == NONE || !mod) {
		snprintf(buf, cap, "hsl(0,0%%,%u%%)", n->parent == NONE ? 80 : 70 + shade / 2);
		return;
	}
	hue = module_hue(mod);
	if (unnamed(n->function))
		snprintf(buf, cap, "hsl(%u,15%%,%u%%)", hue, 66 + shade / 2);
	else if (n->inlined)
		snprintf(buf, cap, "hsl(%u,60%%,%u%%)", hue, 80 + shade / 3);
	else
		snprintf(buf, cap, "hsl(%u,65%%,%u%%)", hue, 52 + shade);
}

/* Where a frame is: "file:line,line" or "module+0xoffset". */
static void put_where(FILE *out, const struct hp_flame *f, const struct node *n)
{
	const char *mod = module_name(f, n->module);

	if (n->parent == NONE) {
		put_xml(out, "every call stack");
	} else if (n->file[0]) {
		put_xml(out, n->file);
		for (unsigned i = 0; i < n->nlines; i++)
			fprintf(out, "%c%" PRIu32, i ? ',' : ':', n->lines[i]);
		if (n->more_lines)
			fputs(",...", out);
	} else if (mod) {
		put_xml(out, mod);
		fprintf(out, "+0x%" PRIx64, n->module_offset);
	} else if (n->module_offset == HP_FRAME_GAP) {
		put_xml(out, "the frames between the innermost and the outermost, not kept");
	} else {
		put_xml(out, n->function[0] == '[' ? "the stack could not be unwound" : "no module");
	}
}

/* Writes node id at offset x (in the metric's units) and, right after it,
 * its drawn children. Recursive: the depth is at most the deepest stack's
 * symbolic frames (HP_CAP_MAX_DEPTH locations and their inlined frames),
 * and a level costs a few words of stack. */
static void write_frame(struct svg *s, uint32_t id, size_t parent_index, double x)
{
	const struct hp_flame *f = s->f;
	const struct node *n = &f->nodes[id];
	size_t index = s->emitted++;
	double xpx = PAD_PX, wpx = s->frame_w;
	double ypx = s->icicle ? HEAD_PX + (double)n->depth * FRAME_PX
			       : s->bottom - (n->depth + 1) * FRAME_PX;
	long chars;

	if (n->parent != NONE) { /* the root is as wide as the image, even when empty */
		xpx += x / s->total * s->frame_w;
		wpx = n->value / s->total * s->frame_w;
	}
	chars = (long)floor((wpx - 6) / CHAR_PX);
	/* The label and the hover name the function as every view does
	 * (frames.h: no parameter list unless an overload needs it); data-n
	 * keeps its whole name for scripts and the search, data-l the label
	 * when it differs. */
	s->name = hp_frame_names_get(s->names, n->function);
	fprintf(s->out, "<g class=\"f%s\" data-n=\"", n->inlined ? " i" : "");
	put_xml(s->out, n->function);
	if (strcmp(s->name, n->function)) {
		fputs("\" data-l=\"", s->out);
		put_xml(s->out, s->name);
	}
	fprintf(s->out, "\" data-d=\"%" PRIu32 "\"", n->depth);
	if (parent_index != (size_t)-1)
		fprintf(s->out, " data-p=\"%zu\"", parent_index);
	fprintf(s->out, " data-x=\"%.15g\" data-v=\"%.15g\"><title>", x, n->value);
	put_xml(s->out, s->name);
	if (n->inlined)
		fputs(" (inlined)", s->out);
	fputc('\n', s->out);
	put_where(s->out, f, n);
	fprintf(s->out, "\n%s, %.2f%% of all</title>", figure(s->fig, sizeof s->fig, f, n->value),
		s->total > 0 ? n->value / s->total * 100 : 0);
	frame_colour(s->colour, sizeof s->colour, f, n);
	fprintf(s->out,
		"<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"%s\"/>"
		"<text x=\"%.2f\" y=\"%.0f\">",
		xpx, ypx, wpx, FRAME_PX - 1, s->colour, xpx + 3, ypx + FRAME_PX - 4.5);
	if (chars >= 4 || (chars > 0 && strlen(s->name) <= (size_t)chars))
		put_xml_cut(s->out, s->name, (size_t)chars, "..");
	fputs("</text></g>\n", s->out);

	for (uint32_t k = 0; k < n->nkids; k++) {
		uint32_t c = f->order[n->kids + k];
		if (s->drawn[c])
			write_frame(s, c, index, x);
		x += f->nodes[c].value;
	}
}

/* Decides which nodes are drawn; returns how many were left out (the
 * roots of the subtrees not drawn), and the drawn depth in *depth. */
static size_t mark_drawn(const struct hp_flame *f, double min_value, uint8_t *drawn,
			 uint32_t *depth, uint8_t *module_used)
{
	size_t left_out = 0;

	drawn[0] = 1;
	*depth = 0;
	for (size_t i = 1; i < f->n; i++) {
		const struct node *n = &f->nodes[i];
		drawn[i] = drawn[n->parent] && n->value >= min_value;
		if (drawn[n->parent] && !drawn[i])
			left_out++;
		if (!drawn[i])
			continue;
		if (n->depth > *depth)
			*depth = n->depth;
		if (module_name(f, n->module))
			module_used[n->module] = 1;
	}
	return left_out;
}

/* The header: title, what was recorded, what is drawn, the controls and
 * the module legend. */
static void write_header(FILE *out, const struct hp_flame *f, const struct hp_flame_options *o,
			 unsigned width, size_t left_out, double min_fraction,
			 const uint8_t *module_used)
{
	const struct hp_model *m = f->m;
	const struct hp_capture *cap = m->cap;
	size_t sub_chars = (size_t)((width - 2 * PAD_PX) / SUBCHAR_PX), used;
	double objects = total_objects(f), lx;
	char fig[96], g[48], buf[256];
	const char *prog = cap->has_meta && cap->program ? cap->program : "(unknown program)";

	fprintf(out, "<text class=\"hp-title\" x=\"%u\" y=\"24\" text-anchor=\"middle\">",
		width / 2);
	if (o->title) {
		put_xml_cut(out, o->title, sub_chars * 12 / 17, "...");
	} else {
		put_xml(out, metric_title(f->metric));
		fputs(": ", out);
		put_xml_cut(out, hp_model_program_name(cap), sub_chars * 12 / 17, "...");
	}
	fputs("</text>\n", out);

	/* What ran: the command line, cut to fit, then pid and snapshot. */
	snprintf(buf, sizeof buf, " \xc2\xb7 pid %" PRIu64 " \xc2\xb7 snapshot %zu of %zu (%s) at %.3f s",
		 cap->pid, (size_t)(m->snap - cap->snapshots) + 1, cap->nsnapshots,
		 hp_capture_reason_name(m->snap->reason), (double)m->snap->time_ns / 1e9);
	used = strlen(buf);
	fprintf(out, "<text class=\"hp-sub\" x=\"%u\" y=\"42\" text-anchor=\"middle\">", width / 2);
	for (size_t i = 0; i < (cap->argc ? cap->argc : 1); i++) {
		const char *a = i ? cap->argv[i] : prog;
		size_t room = sub_chars > used + 8 ? sub_chars - used : 8;
		if (i)
			fputc(' ', out);
		put_xml_cut(out, a, room, "...");
		used += strlen(a) + 1;
		if (used >= sub_chars) {
			if (i + 1 < cap->argc)
				fputs(" ...", out);
			break;
		}
	}
	fprintf(out, "%s</text>\n", buf);

	fprintf(out, "<text class=\"hp-sub\" x=\"%u\" y=\"58\" text-anchor=\"middle\">%s: %s",
		width / 2, hp_metric_name(f->metric), metric_meaning(f));
	fprintf(out, " \xc2\xb7 total %s", figure(fig, sizeof fig, f, hp_flame_total(f)));
	if (objects >= 0)
		fprintf(out, " in %s%s blocks", m->sampled ? "~" : "", grouped(g, sizeof g, objects));
	if (m->sampled)
		fprintf(out, " \xc2\xb7 sampled (one sample per %" PRIu64 " bytes on average): estimates",
			m->sample_rate_bytes);
	if (left_out)
		fprintf(out, " \xc2\xb7 %zu frame%s under %.2g%% not drawn", left_out,
			left_out == 1 ? "" : "s", min_fraction * 100);
	fputs("</text>\n", out);

	fprintf(out, "<text class=\"hp-btn hp-reset\" x=\"%d\" y=\"78\" style=\"display:none\">"
		     "Reset zoom</text>\n", PAD_PX);
	/* The search box: an HTML input in the page (a browser shows it in a
	 * standalone SVG too), no prompt. The share matched goes left of it. */
	fprintf(out, "<foreignObject x=\"%u\" y=\"64\" width=\"%d\" height=\"20\">"
		     "<input xmlns=\"http://www.w3.org/1999/xhtml\" class=\"hp-q\" type=\"search\" "
		     "placeholder=\"Search functions (regular expression)\" "
		     "aria-label=\"Search functions\" style=\"width:%dpx;height:18px;box-sizing:"
		     "border-box;font:12px monospace\"/></foreignObject>\n",
		width - PAD_PX - SEARCH_PX, SEARCH_PX, SEARCH_PX);
	fprintf(out, "<text class=\"hp-sub hp-matched\" x=\"%u\" y=\"78\" text-anchor=\"end\"> "
		     "</text>\n", width - PAD_PX - SEARCH_PX - 8);
	/* The legend: a swatch per module drawn, as many as fit, then a pale one
	 * for inlined frames. */
	lx = PAD_PX + 100;
	fprintf(out, "<g class=\"hp-legend\">");
	for (size_t i = 0; i < m->nmodules; i++) {
		const char *name = m->modules[i].name;
		double w = 14 + strlen(name) * CHAR_PX + 12;
		if (!module_used[i])
			continue;
		if (lx + w > width - PAD_PX - SEARCH_PX - 230) {
			fprintf(out, "<text x=\"%.1f\" y=\"78\">...</text>", lx);
			lx += 4 * CHAR_PX;
			break;
		}
		fprintf(out, "<rect x=\"%.1f\" y=\"69\" width=\"10\" height=\"10\" fill=\"hsl(%u,65%%,58%%)\"/>"
			     "<text x=\"%.1f\" y=\"78\">", lx, module_hue(name), lx + 14);
		put_xml(out, name);
		fputs("</text>", out);
		lx += w;
	}
	fprintf(out, "<rect x=\"%.1f\" y=\"69\" width=\"10\" height=\"10\" fill=\"hsl(0,0%%,88%%)\" "
		     "stroke=\"#888\" stroke-dasharray=\"2 2\" stroke-width=\"0.6\"/>"
		     "<text x=\"%.1f\" y=\"78\" font-style=\"italic\">inlined</text></g>\n",
		lx, lx + 14);
}

int hp_flame_write_svg(FILE *out, const struct hp_flame *f, const struct hp_flame_options *o,
		       size_t *drawn_count)
{
	unsigned width = o->width_px ? o->width_px : 1200;
	double min_fraction = o->min_fraction > 0 ? o->min_fraction : 0.001;
	uint8_t *drawn = calloc(f->n, 1);
	uint8_t *module_used = calloc(f->m->nmodules + 1, 1);
	struct hp_frame_names names;
	struct svg s = {.out = out, .f = f, .names = &names};
	uint32_t depth;
	size_t left_out;
	unsigned height;
	int ret = -ENOMEM;

	if (hp_frame_names_build(&names, f->m, 0) || !drawn || !module_used)
		goto out;
	if (width < 200)
		width = 200;
	left_out = mark_drawn(f, hp_flame_total(f) * min_fraction, drawn, &depth, module_used);
	height = HEAD_PX + (depth + 1) * FRAME_PX + FOOT_PX;
	s.drawn = drawn;
	s.total = hp_flame_total(f);
	s.frame_w = width - 2 * PAD_PX;
	s.bottom = HEAD_PX + (depth + 1) * FRAME_PX;
	s.icicle = o->icicle;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"hp-flame\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" data-fx=\"%d\" data-fw=\"%.0f\" "
		"data-cw=\"%.2f\" data-sw=\"%.2f\" data-unit=\"%s\" data-metric=\"%s\" "
		"data-sampled=\"%d\">\n",
		width, height, width, height, PAD_PX, s.frame_w, CHAR_PX, SUBCHAR_PX,
		metric_unit(f->metric), hp_metric_name(f->metric), f->m->sampled);
	fputs(s.icicle ? "<!-- heapprof icicle graph: the root at the top, callees below their "
			 "callers; a frame's width is its share of the total. -->\n"
		       : "<!-- heapprof flame graph: the root at the bottom, callees above their "
			 "callers; a frame's width is its share of the total. -->\n",
	      out);
	fputs("<style>\n", out);
	fwrite(hp_asset_flame_css, 1, hp_asset_flame_css_len, out);
	fputs("</style>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#fbfaf6\"/>\n", width,
		height);
	write_header(out, f, o, width, left_out, min_fraction, module_used);
	fputs("<g class=\"hp-frames\">\n", out);
	write_frame(&s, 0, (size_t)-1, 0);
	fputs("</g>\n", out);
	/* The details: three lines under the frames, the script wraps the
	 * hovered frame's text into them (never cut at the edge). */
	fprintf(out, "<text class=\"hp-sub hp-details\" x=\"%d\" y=\"%u\">", PAD_PX,
		height - FOOT_PX + 18);
	put_xml(out, s.total > 0 ? "Hover over a frame for details, click to zoom, type in the "
				   "search box (Ctrl-F) to highlight functions."
				 : "Nothing to draw: this metric is 0 in every call stack.");
	fputs("</text>\n", out);
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fwrite(hp_asset_flame_js, 1, hp_asset_flame_js_len, out);
	fputs("]]></script>\n</svg>\n", out);
	if (drawn_count)
		*drawn_count = s.emitted;
	ret = ferror(out) ? -EIO : 0;
out:
	hp_frame_names_free(&names);
	free(drawn);
	free(module_used);
	return ret;
}
