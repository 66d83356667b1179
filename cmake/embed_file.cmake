# Writes the bytes of IN as a C initialiser list ("0x3c,0x21,...", then a terminating 0) into
# OUT, for a file that #includes it inside the braces of an unsigned char array: the web page
# of `pocket-tts serve` (tools/server/page.html) is embedded this way at build time, so the
# binary reads no file at run time and the page stays one readable HTML source.
# Usage: cmake -DIN=file -DOUT=file.inc -P embed_file.cmake
file(READ ${IN} hex HEX)
# two hex digits per byte; a line per input line (after each newline byte, 0x0a)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REPLACE "0x0a," "0x0a,\n" body "${body}")
file(WRITE ${OUT}.tmp "/* generated from ${IN} by cmake/embed_file.cmake */\n${body}\n0\n")
file(RENAME ${OUT}.tmp ${OUT})
