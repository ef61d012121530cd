#!/bin/bash

# Words are separated by any run of whitespace: str.split() with no argument.
sed -i 's/text.split(" ")/text.split()/' "${APP_DIR:-/app}/count.py"
