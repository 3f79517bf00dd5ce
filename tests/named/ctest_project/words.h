#ifndef WORDS_H_
#define WORDS_H_
void words_upper(char *s);
void words_reverse(char *s);
int words_vowels(const char *s);
int words_digits(const char *s);
#endif
