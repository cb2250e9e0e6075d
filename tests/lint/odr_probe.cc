// The ODR probe (SEER_ODR_CHECK, top-level CMakeLists.txt): linked with every Seer
// library whole and with link-time optimization, so GCC compares the definitions of
// every class across all translation units; the build fails on a mismatch. It runs
// nothing.
int main() { return 0; }
