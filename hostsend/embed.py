#!/usr/bin/env python3
"""Writes a C header holding a file's bytes (the BPF object, so that the sender carries its XDP
program and needs no path at run time). Usage: embed.py INPUT OUTPUT NAME"""
import sys

data = open(sys.argv[1], "rb").read()
name = sys.argv[3]
with open(sys.argv[2], "w") as f:
    f.write(f"/* generated from {sys.argv[1].split('/')[-1]} by embed.py */\n")
    f.write(f"static const unsigned char {name}[] = {{\n")
    for i in range(0, len(data), 16):
        f.write("\t" + ", ".join(f"0x{b:02x}" for b in data[i:i + 16]) + ",\n")
    f.write("};\n")
