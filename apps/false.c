/*
 * false.c - exit with status 1.
 *   false
 */
int main(void) { return 1; }
