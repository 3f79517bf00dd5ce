/* A program whose line counts are known by hand: the loop body runs 10
   times, the addition 4 times (i = 0, 3, 6, 9), so s = 18.  */
int main(void) {
  int s = 0;
  for (int i = 0; i < 10; i++) {
    if (i % 3 == 0)
      s += i; /* ADD */
  }
  return s == 18 ? 0 : 1;
}
