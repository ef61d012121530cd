"""Print the number of lines, words and bytes of standard input, as wc counts them."""

import sys

data = sys.stdin.buffer.read()
text = data.decode("utf-8")
print(text.count("\n"), len(text.split(" ")), len(data))
