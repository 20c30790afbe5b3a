/*
 * typename.c - types from template frames, explicit names and vtable
 * symbols (see typename.h).
 *
 * Names are scanned with a nesting depth over <>, () and []: a template
 * argument ends at the first ',' or closing '>' of its own depth.
 */
#include "typename.h"

#include <stdlib.h>
#include <string.h>

#include "demangle.h"

/* Copies s[0..n) to out[0..cap), terminated; returns out. */
static char *copy_n(char *out, size_t cap, const char *s, size_t n)
{
	if (!cap)
		return out;
	if (n >= cap && cap > 4) {
		/* too long: cut, and say so ("std::variant<...") */
		memcpy(out, s, cap - 4);
		memcpy(out + cap - 4, "...", 4);
		return out;
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

/* The length of the template argument that starts at s: up to the first
 * ',' or '>' at depth 0 (not counted), or the end. */
static size_t arg_len(const char *s)
{
	int depth = 0;
	size_t i;

	for (i = 0; s[i]; i++) {
		char c = s[i];
		if (c == '<' || c == '(' || c == '[') {
			depth++;
		} else if (c == '>' || c == ')' || c == ']') {
			if (depth == 0)
				break;
			depth--;
		} else if (c == ',' && depth == 0) {
			break;
		}
	}
	/* Trailing blanks: "Foo >" */
	while (i && s[i - 1] == ' ')
		i--;
	return i;
}

/* The first place where prefix starts a name at nesting depth 0 of
 * function (at its start, or after a blank: past a return type), or NULL. */
static const char *find_top(const char *function, const char *prefix)
{
	size_t n = strlen(prefix);
	int depth = 0;

	for (const char *p = function; *p; p++) {
		if (depth == 0 && (p == function || p[-1] == ' ') && strncmp(p, prefix, n) == 0)
			return p;
		if (*p == '<' || *p == '(' || *p == '[')
			depth++;
		else if ((*p == '>' || *p == ')' || *p == ']') && depth > 0)
			depth--;
	}
	return NULL;
}

/* Whether function, from p on, calls member: p..end of the template
 * argument list, then "::member" (followed by '(' or the end). */
static int is_member(const char *p, const char *member)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && --depth == 0)
			break;
	}
	if (!*p)
		return 0;
	p++;
	if (strncmp(p, "::", 2) != 0)
		return 0;
	p += 2;
	size_t n = strlen(member);
	return strncmp(p, member, n) == 0 && (p[n] == '(' || p[n] == '\0' || p[n] == '<');
}

/* The allocator templates: the name up to the type, and the member that
 * allocates (NULL: any member of the class template, or the function
 * template itself). */
static const struct {
	const char *prefix;
	const char *member;
} templates[] = {
	{"std::__new_allocator<", "allocate"},
	{"__gnu_cxx::new_allocator<", "allocate"},
	{"std::allocator<", "allocate"},
	{"std::allocator_traits<std::allocator<", "allocate"},
	{"std::_Sp_counted_ptr_inplace<", NULL},
	{"std::make_unique<", NULL},
	{"std::make_shared<", NULL},
	{"std::allocate_shared<", NULL},
	{"std::__make_shared<", NULL},
	{"std::__allocate_shared<", NULL},
};

#define CONTROL_BLOCK "std::_Sp_counted_ptr_inplace<"

int hp_typename_from_frame(const char *function, char *out, size_t cap)
{
	/* Most frames name no allocator template: a substring search (fast)
	 * rules them out before the nesting-aware one (a walk per template).
	 * Every prefix has "alloc", "make_" or "_Sp_counted" in it. */
	if (!strstr(function, "alloc") && !strstr(function, "make_") &&
	    !strstr(function, "_Sp_counted"))
		return 0;
	for (size_t i = 0; i < sizeof templates / sizeof *templates; i++) {
		const char *p;

		if (!strstr(function, templates[i].prefix))
			continue;
		p = find_top(function, templates[i].prefix);
		const char *t;
		size_t n;
		char raw[1024];

		if (!p)
			continue;
		/* allocator_traits<allocator<T> >: the member follows the outer
		 * list, which starts at the first '<'. */
		if (templates[i].member && !is_member(strchr(p, '<'), templates[i].member))
			continue;
		t = p + strlen(templates[i].prefix);
		while (*t == ' ')
			t++;
		/* make_shared's block holds T (its first argument). */
		while (strncmp(t, CONTROL_BLOCK, strlen(CONTROL_BLOCK)) == 0)
			t += strlen(CONTROL_BLOCK);
		n = arg_len(t);
		if (!n)
			continue;
		copy_n(raw, sizeof raw, t, n);
		hp_typename_readable(out, cap, raw);
		return 1;
	}
	return 0;
}

/* std::string's spellings, once blanks before '>' are gone. */
static const char *const strings[][2] = {
	{"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char>>",
	 "std::string"},
	{"std::basic_string<char, std::char_traits<char>, std::allocator<char>>", "std::string"},
	{"std::__cxx11::basic_string<char>", "std::string"},
	{"std::basic_string<char>", "std::string"},
	{"std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t>>",
	 "std::wstring"},
	{"std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t>>",
	 "std::wstring"},
	{"std::__cxx11::basic_string<wchar_t>", "std::wstring"},
	{"std::basic_string<wchar_t>", "std::wstring"},
	/* g++ spells integer types its own way (in __PRETTY_FUNCTION__ and
	 * DWARF); clang, demangled names and the C++ standard the short way. */
	{"long long unsigned int", "unsigned long long"},
	{"long long int", "long long"},
	{"long unsigned int", "unsigned long"},
	{"short unsigned int", "unsigned short"},
	{"long int", "long"},
	{"short int", "short"},
};

/* Whether c may be part of an identifier or a qualified name. */
static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == ':';
}

char *hp_typename_readable(char *out, size_t cap, const char *name)
{
	char a[2048], b[2048];
	size_t n = 0;

	/* 1. No blank before '>'. */
	for (const char *p = name; *p && n + 1 < sizeof a; p++) {
		if (*p == ' ' && p[1] == '>')
			continue;
		a[n++] = *p;
	}
	a[n] = '\0';

	/* 2. std::string. */
	n = 0;
	for (const char *p = a; *p && n + 1 < sizeof b;) {
		size_t k, len = 0;
		for (k = 0; k < sizeof strings / sizeof *strings; k++) {
			len = strlen(strings[k][0]);
			if (strncmp(p, strings[k][0], len) == 0 && (p == a || !name_char(p[-1])) &&
			    (!name_char(strings[k][0][len - 1]) || !name_char(p[len])))
				break;
		}
		if (k < sizeof strings / sizeof *strings) {
			size_t r = strlen(strings[k][1]);
			if (n + r + 1 >= sizeof b)
				break;
			memcpy(b + n, strings[k][1], r);
			n += r;
			p += len;
		} else {
			b[n++] = *p++;
		}
	}
	b[n] = '\0';

	/* 3. "X const" -> "const X", where X is one plain name (a pointer's
	 * const is the pointer's and stays). */
	n = 0;
	for (const char *p = b; *p && n + 1 < sizeof a;) {
		const char *q = p;
		while (name_char(*q))
			q++;
		if (q > p && (p == b || !name_char(p[-1])) && strncmp(q, " const", 6) == 0 &&
		    !name_char(q[6]) && strncmp(p, "const", 5) != 0) {
			size_t len = (size_t)(q - p);
			if (n + len + 7 >= sizeof a)
				break;
			memcpy(a + n, "const ", 6);
			memcpy(a + n + 6, p, len);
			n += len + 6;
			p = q + 6;
		} else if (q > p) {
			size_t len = (size_t)(q - p);
			if (n + len + 1 >= sizeof a)
				break;
			memcpy(a + n, p, len);
			n += len;
			p = q;
		} else {
			a[n++] = *p++;
		}
	}
	a[n] = '\0';
	return copy_n(out, cap, a, n);
}

char *hp_typename_explicit(char *out, size_t cap, const char *name)
{
	const char *open = strrchr(name, '[');
	const char *eq;

	/* "[with T = Foo]", "[T = Foo]", "[with T = Foo; U = ...]" */
	if (open && (eq = strstr(open, " = ")) != NULL) {
		const char *t = eq + 3;
		char raw[1024];
		int depth = 0;
		size_t n;

		for (n = 0; t[n]; n++) {
			char c = t[n];
			if (c == '<' || c == '(')
				depth++;
			else if ((c == '>' || c == ')') && depth > 0)
				depth--;
			else if (depth == 0 && (c == ']' || c == ';' || c == ','))
				break;
		}
		if (n && t[n]) {
			copy_n(raw, sizeof raw, t, n);
			return hp_typename_readable(out, cap, raw);
		}
	}
	return hp_typename_readable(out, cap, name);
}

int hp_typename_from_vtable(const char *symbol, char *out, size_t cap)
{
	static const char prefix[] = "vtable for ";
	char *d = NULL;
	int ok = 0;

	if (strncmp(symbol, "_ZTV", 4) == 0) {
		d = hp_demangle(symbol);
		symbol = d ? d : "";
	}
	if (strncmp(symbol, prefix, sizeof prefix - 1) == 0 && symbol[sizeof prefix - 1]) {
		const char *cls = symbol + sizeof prefix - 1;
		/* make_shared's control block (it has a vtable) holds a T:
		 * the type is T's, as from its frames. */
		if (strncmp(cls, CONTROL_BLOCK, strlen(CONTROL_BLOCK)) != 0 ||
		    !hp_typename_from_frame(cls, out, cap))
			hp_typename_readable(out, cap, cls);
		ok = 1;
	}
	free(d);
	return ok;
}

/* The string classes of libstdc++ (both ABIs) and libc++. */
static const char *const string_classes[] = {
	"std::__cxx11::basic_string<",
	"std::basic_string<",
	"std::__1::basic_string<",
};

int hp_typename_from_string_frame(const char *function, char *out, size_t cap)
{
	if (!strstr(function, "basic_string<"))
		return 0;
	for (size_t i = 0; i < sizeof string_classes / sizeof *string_classes; i++) {
		const char *p = find_top(function, string_classes[i]), *q, *t;
		int depth = 0;
		size_t n;
		char raw[256];

		if (!p)
			continue;
		/* A member: the class's argument list, then "::". */
		for (q = p + strlen(string_classes[i]) - 1; *q; q++) {
			if (*q == '<')
				depth++;
			else if (*q == '>' && --depth == 0)
				break;
		}
		if (!*q || strncmp(q + 1, "::", 2) != 0)
			continue;
		t = p + strlen(string_classes[i]);
		n = arg_len(t);
		if (!n || n >= sizeof raw)
			continue;
		copy_n(raw, sizeof raw, t, n);
		hp_typename_readable(out, cap, raw);
		return 1;
	}
	return 0;
}

/* Whether the argument at s (up to its end at depth 0) is a standard
 * template's default argument: an allocator, a comparison, a hash or a
 * deleter of the standard library. */
static int default_arg(const char *s)
{
	static const char *const defaults[] = {
		"std::allocator<", "std::less<", "std::hash<", "std::equal_to<",
		"std::default_delete<", "std::char_traits<",
	};

	for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
		if (strncmp(s, defaults[i], strlen(defaults[i])) == 0)
			return 1;
	return 0;
}

char *hp_typename_drop_defaults(char *out, size_t cap, const char *name)
{
	char a[2048];
	int changed = 1;

	hp_typename_readable(a, sizeof a, name);
	while (changed) {
		changed = 0;
		for (char *p = a; *p; p++) {
			size_t n;
			char *open;
			int depth = 0;

			if (strncmp(p, ", ", 2) != 0 || !default_arg(p + 2))
				continue;
			n = arg_len(p + 2);
			/* The last argument of its list... */
			if (p[2 + n] != '>')
				continue;
			/* ...of a std:: template. */
			for (open = p; open > a; open--) {
				if (*open == '>' || *open == ')')
					depth++;
				else if ((*open == '<' || *open == '(') && depth-- == 0)
					break;
			}
			if (*open != '<')
				continue;
			while (open > a && name_char(open[-1]))
				open--;
			if (strncmp(open, "std::", 5) != 0)
				continue;
			memmove(p, p + 2 + n, strlen(p + 2 + n) + 1);
			changed = 1;
			break;
		}
	}
	return copy_n(out, cap, a, strlen(a));
}
