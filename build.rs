// ext-php-rs's own build script locates PHP; this one only makes cargo rebuild
// when the PHP it was built against changes.
fn main() {
    println!("cargo:rerun-if-env-changed=PHP");
    println!("cargo:rerun-if-env-changed=PHP_CONFIG");
}
