//! The heap advice of the `butane` command, checked on a main thread of its own (this test
//! has no harness: the library's test threads allocate outside the program break).

fn main() {
    let range = flint::cli::heap::prefer_huge_pages(flint::cli::heap::HUGE_HEAP)
        .expect("the heap was extended and advised");
    assert!(range.end - range.start >= 16 << 20, "{range:x?}");
    // The kernel marks an advised mapping `hg` in its flags.
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
    let mut inside = false;
    let mut flagged = false;
    for line in smaps.lines() {
        if let Some((span, _)) = line.split_once(' ')
            && let Some((a, b)) = span.split_once('-')
            && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            inside = a <= range.start && range.end <= b;
        } else if inside && line.starts_with("VmFlags:") {
            flagged = line.split_whitespace().any(|f| f == "hg");
            break;
        }
    }
    assert!(
        flagged,
        "no mapping covering {range:x?} is advised:\n{smaps}"
    );
    // The heap still works as before.
    let v: Vec<u8> = vec![7; 40 << 20];
    assert_eq!(
        v.iter().map(|&b| usize::from(b)).sum::<usize>(),
        7 * (40 << 20)
    );
    println!(
        "heap advised for huge pages: {:#x}..{:#x}",
        range.start, range.end
    );
}
