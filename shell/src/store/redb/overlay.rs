//! The store file as redb's check sees it: reads come from the file, writes stay in memory, so
//! checking a store never changes it and holds in memory only what redb writes, not the file.

use std::fs::File;
use std::io;
use std::sync::{Mutex, PoisonError};

use redb::StorageBackend;

/// A file under a copy-on-write layer: [`StorageBackend::write`] and
/// [`StorageBackend::set_len`] change only what later reads of this backend see.
#[derive(Debug)]
pub struct Overlay {
    file: File,
    state: Mutex<Layer>,
}

/// What redb has written over the file, in order, and the length it has set.
#[derive(Debug)]
struct Layer {
    len: u64,
    writes: Vec<(u64, Vec<u8>)>,
}

impl Overlay {
    /// `file` (opened for reading) under an empty layer.
    pub fn new(file: File) -> io::Result<Overlay> {
        let len = file.metadata()?.len();
        Ok(Overlay {
            file,
            state: Mutex::new(Layer {
                len,
                writes: Vec::new(),
            }),
        })
    }

    fn layer(&self) -> std::sync::MutexGuard<'_, Layer> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl StorageBackend for Overlay {
    fn len(&self) -> io::Result<u64> {
        Ok(self.layer().len)
    }

    fn read(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let layer = self.layer();
        let end = offset
            .checked_add(len as u64)
            .filter(|&e| e <= layer.len)
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"))?;
        let mut buf = vec![0u8; len];
        // The file's bytes where it has them (a length set past its end reads as zeros).
        let on_file = self.file.metadata()?.len().min(end).saturating_sub(offset) as usize;
        if on_file > 0 {
            crate::platform::positioned::read_exact_at(&self.file, &mut buf[..on_file], offset)?;
        }
        // Then every write over this range, oldest first.
        for (at, data) in &layer.writes {
            let (lo, hi) = (offset.max(*at), end.min(at + data.len() as u64));
            if lo < hi {
                let dst = (lo - offset) as usize..(hi - offset) as usize;
                let src = (lo - at) as usize..(hi - at) as usize;
                buf[dst].copy_from_slice(&data[src]);
            }
        }
        Ok(buf)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut layer = self.layer();
        if len < layer.len {
            // Bytes cut off and later regrown read as zeros, as a file's do.
            let cut = vec![0; (layer.len - len) as usize];
            layer.writes.push((len, cut));
        }
        layer.len = len;
        Ok(())
    }

    fn sync_data(&self, _eventual: bool) -> io::Result<()> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.layer().writes.push((offset, data.to_vec()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlay(bytes: &[u8]) -> (Overlay, std::path::PathBuf) {
        let path = std::env::temp_dir().join(format!(
            "redmark-overlay-{}-{}",
            std::process::id(),
            bytes.len()
        ));
        std::fs::write(&path, bytes).unwrap();
        (Overlay::new(File::open(&path).unwrap()).unwrap(), path)
    }

    #[test]
    fn writes_are_seen_by_reads_and_never_reach_the_file() {
        let (o, path) = overlay(b"0123456789");
        o.write(2, b"ab").unwrap();
        o.write(3, b"XYZ").unwrap();
        assert_eq!(o.read(0, 10).unwrap(), b"01aXYZ6789");
        assert_eq!(o.read(4, 3).unwrap(), b"YZ6");
        o.set_len(14).unwrap();
        assert_eq!(o.read(8, 6).unwrap(), b"89\0\0\0\0");
        o.set_len(5).unwrap();
        o.set_len(8).unwrap();
        assert_eq!(o.read(0, 8).unwrap(), b"01aXY\0\0\0");
        assert!(o.read(4, 5).is_err(), "past the end");
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789");
        std::fs::remove_file(path).unwrap();
    }
}
