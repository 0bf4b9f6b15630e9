/*
 * true.c - exit with status 0.
 *   true
 */
int main(void) { return 0; }
