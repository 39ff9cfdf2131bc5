fn main() {
    std::process::exit(xqtune::cli::main());
}
