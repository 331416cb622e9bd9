//! Compiles `proto/cuzk/v1/proving.proto` into the gRPC server and client code (`server::proto`)
//! with protox, a protobuf compiler in Rust, so that no `protoc` needs to be installed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/cuzk/v1/proving.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .emit_rerun_if_changed(false)
        .compile_fds(descriptors)?;
    Ok(())
}
