// rust_known.rs - allocations from known Rust functions, whose symbol
// names the tests demangle (tests/integration/test_rust.c). Built twice by
// the Makefile with Debian's rustc, with the legacy mangling (rust_legacy)
// and with v0 (rust_v0), without optimisation so that every allocation
// stays in the function that makes it.
//
// An ordinary Rust main: std's start (std::rt::init) asks
// pthread_getattr_np for the main thread's stack, which allocates inside
// glibc's lock of that thread; the recorder must not take that lock again
// from inside the allocation (it once did, and every Rust program hung).

pub struct Store {
    items: Vec<u64>,
}

impl Store {
    // 10 pushes into a Vec with room for 4: grows to 8, then 16.
    #[inline(never)]
    pub fn fill(&mut self) {
        for i in 0..10 {
            self.items.push(i);
        }
    }
}

// One Box of 1000 bytes, never freed.
#[inline(never)]
pub fn leak_box() -> &'static mut [u8; 1000] {
    Box::leak(Box::new([7u8; 1000]))
}

// One Vec of 300 u32 (1200 bytes), freed on return.
#[inline(never)]
pub fn grow_vec() -> usize {
    let v: Vec<u32> = vec![1u32; 300];
    v.len()
}

fn main() {
    let leaked = leak_box();
    let n = grow_vec();
    let mut s = Store { items: Vec::with_capacity(4) };
    s.fill();
    std::process::exit(if leaked[999] == 7 && n == 300 && s.items.len() == 10 { 0 } else { 1 });
}
