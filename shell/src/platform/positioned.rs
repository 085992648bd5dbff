//! Reading a file at an offset without sharing a cursor (`pread` on Unix, `ReadFile` with an
//! offset on Windows, where the cursor moves but nothing else reads through it).

use std::fs::File;
use std::io;

/// Fills `buf` from `file` at `offset`; an early end of file is an error.
pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn reads_at_an_offset_and_refuses_past_the_end() {
        let path = std::env::temp_dir().join(format!("redmark-pread-{}", std::process::id()));
        File::create(&path)
            .unwrap()
            .write_all(b"0123456789")
            .unwrap();
        let f = File::open(&path).unwrap();
        let mut buf = [0; 4];
        read_exact_at(&f, &mut buf, 3).unwrap();
        assert_eq!(&buf, b"3456");
        let e = read_exact_at(&f, &mut buf, 8).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        std::fs::remove_file(&path).unwrap();
    }
}
