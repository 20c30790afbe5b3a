/*
 * test_typename.c - types read from names (src/analyzer/symbols/typename.c), on
 * real names: the allocator frames of tests/programs/cxx_types.cpp as
 * g++ 12 and clang 14 (Debian 12) name them, demangled from the symbol
 * table (-O0) and as their DWARF spells inlined frames (-O2); explicit
 * names as __PRETTY_FUNCTION__ writes them; vtable symbols.
 */
#include <stdio.h>

#include "../../src/analyzer/symbols/typename.h"
#include "../harness/harness.h"

#define RBNODE_GXX                                                                                 \
	"std::_Rb_tree_node<std::pair<int const, std::__cxx11::basic_string<char, "                \
	"std::char_traits<char>, std::allocator<char> > > >"
#define RBNODE_CLANG_DWARF                                                                         \
	"std::_Rb_tree_node<std::pair<const int, std::__cxx11::basic_string<char, "                \
	"std::char_traits<char>, std::allocator<char> > > >"
#define RBNODE "std::_Rb_tree_node<std::pair<const int, std::string>>"
#define CONTROL "std::_Sp_counted_ptr_inplace<Widget, std::allocator<void>, (__gnu_cxx::_Lock_policy)2>"

static void expect_frame(const char *function, const char *want)
{
	char out[1024], why[2048];
	int ok = hp_typename_from_frame(function, out, sizeof out);

	snprintf(why, sizeof why, "%s names a type", function);
	if (!want) {
		snprintf(why, sizeof why, "%s names no type", function);
		expect_eq_u64(ok, 0, why);
		return;
	}
	if (expect_true(ok, why)) {
		snprintf(why, sizeof why, "the type %s names", function);
		expect_str(out, want, why);
	}
}

HP_TEST(typename_symtab_names_gxx_and_clang)
{
	/* Identical in g++'s and clang's -O0 binaries (nm -C). */
	expect_frame("std::__new_allocator<" RBNODE_GXX ">::allocate(unsigned long, void const*)",
		     RBNODE);
	expect_frame("std::allocator_traits<std::allocator<" RBNODE_GXX
		     "> >::allocate(std::allocator<" RBNODE_GXX ">&, unsigned long)",
		     RBNODE);
	expect_frame("std::__new_allocator<std::__detail::_Hash_node<std::pair<int const, int>, "
		     "false> >::allocate(unsigned long, void const*)",
		     "std::__detail::_Hash_node<std::pair<const int, int>, false>");
	expect_frame("std::__new_allocator<std::__detail::_Hash_node_base*>::allocate(unsigned "
		     "long, void const*)",
		     "std::__detail::_Hash_node_base*");
	expect_frame("std::__new_allocator<Point>::allocate(unsigned long, void const*)", "Point");
	expect_frame("std::__new_allocator<std::unique_ptr<Gadget, std::default_delete<Gadget> > "
		     ">::allocate(unsigned long, void const*)",
		     "std::unique_ptr<Gadget, std::default_delete<Gadget>>");
	/* make_shared: the control block holds the T. */
	expect_frame("std::__new_allocator<" CONTROL ">::allocate(unsigned long, void const*)",
		     "Widget");
	expect_frame(CONTROL "::_Sp_counted_ptr_inplace<>(std::allocator<void>)", "Widget");
	expect_frame("std::__detail::_MakeUniq<Gadget>::__single_object std::make_unique<Gadget>()",
		     "Gadget");
	/* g++ and clang write make_shared's return type apart. */
	expect_frame("std::shared_ptr<std::enable_if<!std::is_array<Widget>::value, Widget>::type> "
		     "std::make_shared<Widget>()",
		     "Widget");
	expect_frame("std::shared_ptr<std::enable_if<!is_array<Widget>::value, Widget>::type> "
		     "std::make_shared<Widget>()",
		     "Widget");
	expect_frame("__gnu_cxx::new_allocator<int>::allocate(unsigned long, void const*)", "int");
	expect_frame("std::allocator<Foo>::allocate(unsigned long)", "Foo");
	/* Not allocation: deallocate, address-of, the vector's own helper. */
	expect_frame("std::__new_allocator<Point>::deallocate(Point*, unsigned long)", NULL);
	expect_frame("std::allocator<" CONTROL ">* std::__addressof<std::allocator<" CONTROL
		     "> >(std::allocator<" CONTROL ">&)",
		     NULL);
	expect_frame("std::_Vector_base<Point, std::allocator<Point> >::_M_allocate(unsigned long)",
		     NULL);
	expect_frame("main", NULL);
}

HP_TEST(typename_dwarf_names_gxx_and_clang)
{
	/* Inlined frames (-O2) as the DWARF names them: qualified, without
	 * parameters; g++ writes "int const", clang "const int". */
	expect_frame("std::__new_allocator<" RBNODE_GXX ">::allocate", RBNODE);
	expect_frame("std::__new_allocator<" RBNODE_CLANG_DWARF ">::allocate", RBNODE);
	expect_frame("std::__new_allocator<std::_Rb_tree_node<std::pair<const int, "
		     "std::__cxx11::basic_string<char> > > >::allocate",
		     RBNODE);
	expect_frame("std::__new_allocator<std::__detail::_Hash_node<std::pair<int const, int>, "
		     "false> >::allocate",
		     "std::__detail::_Hash_node<std::pair<const int, int>, false>");
	expect_frame("std::make_unique<Gadget>", "Gadget");
}

HP_TEST(typename_readable)
{
	char out[256];

	expect_str(hp_typename_readable(out, sizeof out,
					"std::vector<std::__cxx11::basic_string<char, "
					"std::char_traits<char>, std::allocator<char> >, "
					"std::allocator<std::__cxx11::basic_string<char, "
					"std::char_traits<char>, std::allocator<char> > > >"),
		   "std::vector<std::string, std::allocator<std::string>>", "std::string, >>");
	expect_str(hp_typename_readable(out, sizeof out, "std::pair<int const, char const*>"),
		   "std::pair<const int, const char*>", "const moves before a plain name");
	expect_str(hp_typename_readable(out, sizeof out, "Foo* const"), "Foo* const",
		   "a const pointer stays");
	expect_str(hp_typename_readable(out, sizeof out, "my_basic_string<char>"),
		   "my_basic_string<char>", "a name that merely ends alike stays");
	/* (issue 24, item 3: a cut says so; it once read "std::pa") */
	expect_str(hp_typename_readable(out, 8, "std::pair<int, int>"), "std:...",
		   "cut to fit, terminated, with an ellipsis");
}

/* Issue 26: string classes' frames type their buffers by character, and
 * DWARF's spellings read as __PRETTY_FUNCTION__'s. */
HP_TEST(typename_strings_and_dwarf_spellings)
{
	char out[256];

	expect_true(hp_typename_from_string_frame(
			    "std::__cxx11::basic_string<char, std::char_traits<char>, "
			    "std::allocator<char> >::_M_create(unsigned long&, unsigned long)",
			    out, sizeof out),
		    "libstdc++'s _M_create");
	expect_str(out, "char", "its buffer: char");
	expect_true(hp_typename_from_string_frame(
			    "void std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, "
			    "std::allocator<wchar_t> >::_M_construct<wchar_t const*>(wchar_t const*, "
			    "wchar_t const*, std::forward_iterator_tag)",
			    out, sizeof out),
		    "a member template, past its return type");
	expect_str(out, "wchar_t", "wchar_t");
	expect_true(hp_typename_from_string_frame("std::__1::basic_string<char16_t, "
						  "std::__1::char_traits<char16_t>, "
						  "std::__1::allocator<char16_t> >::__grow_by(...)",
						  out, sizeof out),
		    "libc++'s");
	expect_str(out, "char16_t", "char16_t");
	expect_true(!hp_typename_from_string_frame("std::vector<std::__cxx11::basic_string<char, "
						   "std::char_traits<char>, std::allocator<char> "
						   "> >::_M_realloc_insert(int)",
						   out, sizeof out),
		    "a string as a template argument is no string frame");
	expect_true(!hp_typename_from_string_frame("my::basic_string<char>::grow()", out,
						   sizeof out),
		    "another namespace's basic_string");
	expect_str(hp_typename_drop_defaults(out, sizeof out,
					     "std::set<int, std::less<int>, std::allocator<int> >"),
		   "std::set<int>", "set's defaults");
	expect_str(hp_typename_drop_defaults(
			   out, sizeof out,
			   "std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, "
			   "std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, "
			   "std::char_traits<char>, std::allocator<char> > > >"),
		   "std::vector<std::string>", "vector's, std::string's");
	expect_str(hp_typename_drop_defaults(out, sizeof out,
					     "std::map<int, Foo, std::less<int>, "
					     "std::allocator<std::pair<int const, Foo> > >"),
		   "std::map<int, Foo>", "map's");
	expect_str(hp_typename_drop_defaults(out, sizeof out, "my::set<int, std::less<int> >"),
		   "my::set<int, std::less<int>>", "another namespace's arguments stay");
	expect_str(hp_typename_readable(out, sizeof out, "std::pair<long unsigned int, bool>"),
		   "std::pair<unsigned long, bool>", "g++'s long unsigned int");
	expect_str(hp_typename_readable(out, sizeof out, "long long int*"), "long long*",
		   "long long int");
	expect_str(hp_typename_readable(out, sizeof out, "long intx"), "long intx",
		   "a name that merely starts alike stays");
}

HP_TEST(typename_explicit_and_vtable)
{
	char out[256];

	expect_str(hp_typename_explicit(out, sizeof out,
					"const char* heapprof::type_name() [with T = Foo]"),
		   "Foo", "g++'s __PRETTY_FUNCTION__");
	expect_str(hp_typename_explicit(out, sizeof out,
					"const char *heapprof::type_name() [T = ns::Bar<int>]"),
		   "ns::Bar<int>", "clang's __PRETTY_FUNCTION__");
	expect_str(hp_typename_explicit(out, sizeof out,
					"const char* f() [with T = std::map<int, int>; U = int]"),
		   "std::map<int, int>", "the first parameter");
	expect_str(hp_typename_explicit(out, sizeof out, "struct conn"), "struct conn",
		   "a plain name is itself");
	expect_true(hp_typename_from_vtable("_ZTV6Circle", out, sizeof out), "_ZTV names a class");
	expect_str(out, "Circle", "vtable for Circle");
	expect_true(hp_typename_from_vtable("_ZTVN5shape6SquareE", out, sizeof out),
		    "a nested class");
	expect_str(out, "shape::Square", "vtable for shape::Square");
	expect_true(hp_typename_from_vtable(
			    "_ZTVSt23_Sp_counted_ptr_inplaceI3BigSaIvELN9__gnu_cxx12_Lock_policyE2EE",
			    out, sizeof out),
		    "make_shared's control block");
	expect_str(out, "Big", "the control block's vtable names the T it holds");
	expect_eq_u64(hp_typename_from_vtable("_ZTI6Circle", out, sizeof out), 0,
		      "typeinfo is no vtable");
	expect_eq_u64(hp_typename_from_vtable("some_global", out, sizeof out), 0,
		      "any other symbol: unknown");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
