/*
 * test_names.c - how the report names and classes frames (issue 24, items
 * 2 and 4): hp_name_display on real demangled names (g++ 12, rustc's
 * legacy and v0 manglings, as Debian 12's demanglers write them), and
 * hp_model_frame_class on modules and files of the language runtimes and
 * of a program whose code lives in shared objects (clang's).
 */
#include <stdio.h>
#include <string.h>

#include "../../src/analyzer/model/model.h"
#include "../../src/analyzer/symbols/typename.h"
#include "../harness/harness.h"

static void expect_display(const char *name, const char *want)
{
	char out[1024], why[1200];

	snprintf(why, sizeof why, "hp_name_display(%s)", name);
	expect_str(hp_name_display(out, sizeof out, name), want, why);
}

HP_TEST(names_without_parameter_lists)
{
	expect_display("store::index_value(store::Value const*, std::__cxx11::basic_string<char, "
		       "std::char_traits<char>, std::allocator<char> > const&)",
		       "store::index_value");
	expect_display(
		"void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>"
		"(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, "
		"int const&)",
		"std::vector<...>::_M_realloc_insert<...>");
	expect_display("Cache<int>::insert(std::string const&) const", "Cache<...>::insert");
	expect_display("operator new(unsigned long)", "operator new");
	expect_display("operator new[](unsigned long, std::nothrow_t const&)", "operator new[]");
	expect_display("Shape::operator()(int) const", "Shape::operator()");
	expect_display("Shape::operator bool() const", "Shape::operator bool");
	expect_display(
		"std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > "
		">::operator[](int const&)",
		"std::map<...>::operator[]");
	expect_display("std::ostream& operator<< <char>(std::ostream&, char const*)",
		       "operator<< <...>");
	expect_display("(anonymous namespace)::parse(char const*)", "(anonymous namespace)::parse");
	/* a lambda: the demangler's name, and the DWARF-built one */
	expect_display("main::{lambda()#1}::operator()() const", "main::{lambda()#1}::operator()");
	expect_display("store::grow(int)::{lambda()#1}::operator()() const",
		       "store::grow(int)::{lambda()#1}::operator()");
	expect_display("main::{lambda}::operator()", "main::{lambda}::operator()");
	/* names without parameters stay as they are */
	expect_display("build_tree", "build_tree");
	expect_display("known::Store::fill", "known::Store::fill");
	/* Rust v0: an impl's self type is the name's first part */
	expect_display("<known::Store>::fill", "<known::Store>::fill");
	expect_display("<r::Node>::build", "<r::Node>::build");
	expect_display("<alloc::raw_vec::RawVec<u8>>::grow_one",
		       "<alloc::raw_vec::RawVec<...>>::grow_one");
	expect_display("<alloc::vec::Vec<u32> as core::clone::Clone>::clone",
		       "<alloc::vec::Vec<...> as core::clone::Clone>::clone");
	expect_display("alloc::vec::from_elem::<u32>", "alloc::vec::from_elem::<...>");
}

/* A frame of module path, function fn and file. */
static enum hp_frame_class class_of(const char *path, const char *fn, const char *file)
{
	struct hp_cap_module cap = {.path = (char *)path};
	struct hp_mmodule mod = {.cap = &cap, .name = path};
	struct hp_model m = {.nmodules = 1, .modules = &mod};
	struct hp_sym s = {fn, file, file[0] ? 10 : 0, 0};
	struct hp_location l = {.module = 0, .nsyms = 1, .syms = &s};

	return hp_model_frame_class(&m, &l, &s);
}

HP_TEST(frames_of_the_runtime_are_library)
{
	/* the language runtimes' libraries */
	expect_eq_u64(class_of("/lib/x86_64-linux-gnu/libc.so.6", "__GI___strdup", ""),
		      HP_FRAME_LIBRARY, "libc");
	expect_eq_u64(class_of("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "0xa57ba", ""),
		      HP_FRAME_LIBRARY, "libstdc++ without symbols");
	expect_eq_u64(class_of("/lib64/ld-linux-x86-64.so.2", "_dl_new_object", ""),
		      HP_FRAME_LIBRARY, "the loader");
	expect_eq_u64(class_of("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "je_malloc", ""),
		      HP_FRAME_LIBRARY, "an allocator");
	/* clang's code is all in shared objects: its own */
	expect_eq_u64(class_of("/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14",
			       "clang::Sema::ActOnTag", ""),
		      HP_FRAME_OWN, "libclang-cpp");
	expect_eq_u64(class_of("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
			       "llvm::FoldingSetBase::FoldingSetBase", ""),
		      HP_FRAME_OWN, "libLLVM");
	/* std:: in any module; Rust's std, core and alloc, by name or file */
	expect_eq_u64(class_of("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
			       "std::vector<int>::push_back", ""),
		      HP_FRAME_LIBRARY, "std:: inlined into libLLVM");
	expect_eq_u64(class_of("/tmp/prog", "alloc::raw_vec::finish_grow", ""), HP_FRAME_LIBRARY,
		      "Rust's alloc::");
	expect_eq_u64(class_of("/tmp/prog", "<alloc::alloc::Global>::alloc_impl", ""),
		      HP_FRAME_LIBRARY, "Rust v0's <alloc::...>");
	expect_eq_u64(
		class_of(
			"/tmp/prog", "alloc_impl_runtime",
			"/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/alloc/src/alloc.rs"),
		HP_FRAME_LIBRARY, "an inlined std frame, by its file");
	expect_eq_u64(class_of("/tmp/prog", "known::grow_vec", "/src/main.rs"), HP_FRAME_OWN,
		      "the program's Rust");
	expect_eq_u64(class_of("/tmp/prog", "_start", ""), HP_FRAME_ENTRY, "_start");
}

/* Issue 24, item 3: a type name too long for its buffer is cut with an
 * ellipsis, never silently ("std::varian"). */
HP_TEST(long_type_names_end_with_an_ellipsis)
{
	char fn[3000], out[256];
	size_t n;

	n = (size_t)snprintf(fn, sizeof fn, "std::__new_allocator<std::variant<");
	for (int i = 0; i < 120; i++)
		n += (size_t)snprintf(fn + n, sizeof fn - n, "%sType%03d", i ? ", " : "", i);
	snprintf(fn + n, sizeof fn - n, "> >::allocate(unsigned long, void const*)");
	expect_true(hp_typename_from_frame(fn, out, sizeof out),
		    "the allocator frame names a type");
	expect_eq_u64(strlen(out), sizeof out - 1, "the name fills its buffer");
	expect_str(out + strlen(out) - 3, "...", "and ends with an ellipsis");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
