/*
 * typename.h - the type an allocation is of, read from names: a template
 * frame of its stack, an explicit name, a vtable's symbol.
 *
 * Inference from the stack (issue 9): the innermost symbolized frame
 * (inlined frames included) that is an allocator template names the type
 * it allocates, its first template argument:
 *
 *   std::__new_allocator<T>::allocate, __gnu_cxx::new_allocator<T>::allocate,
 *   std::allocator<T>::allocate, std::allocator_traits<std::allocator<T>>::allocate,
 *   std::_Sp_counted_ptr_inplace<T, ...>::...    (make_shared's block: T),
 *   std::make_unique<T, ...>, std::make_shared<T, ...>, std::allocate_shared<T, ...>
 *
 * A node type stays what it is (a std::map<int, std::string>'s node is
 * std::_Rb_tree_node<std::pair<const int, std::string>>); only make_shared's
 * control block is unwrapped to the T it holds.
 *
 * Names are made readable (hp_typename_readable): std::string for
 * basic_string<char> with its default arguments (as g++'s DWARF omits them
 * or clang's spells them), "const int" for "int const", ">>" for "> >".
 *
 * Pure string functions: no allocation, thread-safe. Every out buffer is
 * always terminated, cut when too small.
 */
#ifndef HP_ANALYZER_TYPENAME_H
#define HP_ANALYZER_TYPENAME_H

#include <stddef.h>

/* Writes name, made readable, to out[0..cap); returns out. */
char *hp_typename_readable(char *out, size_t cap, const char *name);

/* When function (a demangled frame name) is an allocator template of the
 * list above, writes the type it allocates (readable) to out and returns 1;
 * else returns 0. */
int hp_typename_from_frame(const char *function, char *out, size_t cap);

/* When function (a demangled frame name) is a member of a standard
 * string class (libstdc++'s std::__cxx11::basic_string<C, ...> or
 * std::basic_string<C, ...>, libc++'s std::__1::basic_string<C, ...>:
 * _M_create, _M_construct, _M_mutate, reserve, __init, __grow_by...),
 * writes C (the type of its buffer's elements, readable) to out and
 * returns 1; else 0. */
int hp_typename_from_string_frame(const char *function, char *out, size_t cap);

/* name made readable, then without the default arguments of standard
 * templates (std::allocator, std::less, std::hash, std::equal_to,
 * std::default_delete, std::char_traits as a template's last arguments),
 * as __PRETTY_FUNCTION__ spells a type: DWARF's
 * "std::set<int, std::less<int>, std::allocator<int> >" reads
 * "std::set<int>". Written to out; returns out. */
char *hp_typename_drop_defaults(char *out, size_t cap, const char *name);

/* The type an explicit name stands for: a __PRETTY_FUNCTION__ of a
 * template, "... [with T = Foo]" (g++) or "... [T = Foo]" (clang), names
 * Foo; any other name is itself. Written readable to out; returns out. */
char *hp_typename_explicit(char *out, size_t cap, const char *name);

/* The class whose vtable a symbol is: the demangled "vtable for X" (the
 * symbol _ZTV<X>) names X, written readable to out, and returns 1; any
 * other symbol returns 0. symbol may be mangled or demangled. */
int hp_typename_from_vtable(const char *symbol, char *out, size_t cap);

#endif
