//! The heap advice of the `butane` command, checked on a main thread of its own (this test
//! has no harness: the library's test threads allocate outside the program break).

use std::ops::Range;

fn main() {
    let advised = flint::cli::heap::prefer_huge_pages(flint::cli::heap::HUGE_HEAP);
    // A kernel built without transparent huge pages refuses the advice: nothing changes.
    if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
        assert_eq!(advised, None);
        heap_still_works();
        println!("no transparent huge pages in this kernel: heap left as it is");
        return;
    }
    let range = advised.expect("the heap was extended and advised");
    assert!(range.end - range.start >= 16 << 20, "{range:x?}");
    assert!(flagged(&range), "no mapping covering {range:x?} is advised");
    heap_still_works();
    println!(
        "heap advised for huge pages: {:#x}..{:#x}",
        range.start, range.end
    );
}

/// Whether the mapping holding `range` carries the kernel's mark of the advice (`hg`).
fn flagged(range: &Range<usize>) -> bool {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((span, _)) = line.split_once(' ')
            && let Some((a, b)) = span.split_once('-')
            && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            inside = a <= range.start && range.end <= b;
        } else if inside && line.starts_with("VmFlags:") {
            return line.split_whitespace().any(|f| f == "hg");
        }
    }
    false
}

fn heap_still_works() {
    let v: Vec<u8> = vec![7; 40 << 20];
    assert_eq!(
        v.iter().map(|&b| usize::from(b)).sum::<usize>(),
        7 * (40 << 20)
    );
}
