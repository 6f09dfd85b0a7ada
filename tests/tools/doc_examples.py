"""Run the ```python blocks of a Markdown file in order, in one namespace, as a reader
would paste them. Prints how many ran; a block that raises fails the run.
usage: doc_examples.py FILE.md"""
import re
import sys

text = open(sys.argv[1]).read()
blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
if not blocks:
    sys.exit("%s: no ```python block" % sys.argv[1])
ns = {"__name__": "__doc_example__"}
for i, src in enumerate(blocks, 1):
    try:
        exec(compile(src, "%s block %d" % (sys.argv[1], i), "exec"), ns)
    except Exception:
        print("%s: python block %d failed:\n%s" % (sys.argv[1], i, src), file=sys.stderr)
        raise
print("%d python blocks ran" % len(blocks))
