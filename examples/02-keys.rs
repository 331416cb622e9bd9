//! Keys on disk in bellperson's `.params` layout: write, read back checked and unchecked, and see
//! the clear error a truncated file gives.
//!
//! `cargo run --release --example 02-keys`

use baton::circuits::Synthetic;
use baton::{Check, ProvingKey};

fn main() -> Result<(), baton::Error> {
    let pk = baton::generate_random_parameters(Synthetic::new(1 << 12, 0), &mut rand::rngs::OsRng)?;
    let dir = std::env::temp_dir().join("baton-example-keys");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("synthetic-4096.params");
    pk.write_file(&path)?;
    let size = std::fs::metadata(&path)?.len();
    println!("wrote {} ({size} bytes)", path.display());
    assert_eq!(ProvingKey::read(&path)?, pk);
    assert_eq!(ProvingKey::read_with(&path, Check::None)?, pk);
    println!("read back checked (on curve, in subgroup) and unchecked: identical");
    let bytes = std::fs::read(&path)?;
    match ProvingKey::from_bytes(&bytes[..bytes.len() / 2], Check::Full) {
        Err(e) => println!("a truncated copy is refused: {e}"),
        Ok(_) => println!("unexpected: a truncated key was accepted"),
    }
    Ok(())
}
