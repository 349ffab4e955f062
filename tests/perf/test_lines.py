"""perf.lines.whole_lines: the lines of a stream whatever its chunks, as the official client's own splitting gives
them, one line at a time."""

from hypothesis import given
from hypothesis import strategies as st
from kubernetes.watch.watch import iter_resp_lines

from perf.lines import whole_lines

LINE = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"."))


class _Chunks:
    def __init__(self, chunks):
        self.chunks = chunks

    def stream(self, amt=None, decode_content=None):
        return iter(self.chunks)


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@given(st.lists(LINE, max_size=30), st.booleans(), st.lists(st.integers(min_value=0), max_size=20))
def test_the_lines_whatever_the_chunks(lines, ends_mid_line, cuts):
    data = b"".join(line + b"\n" for line in lines) + (b"tail" if ends_mid_line else b"")
    chunks = _cut(data, cuts)
    got = list(whole_lines(chunks))
    assert b"".join(got) == data
    assert got == [line + b"\n" for line in lines] + ([b"tail"] if ends_mid_line else [])
    # The official client reads the same lines from it as from the chunks themselves.
    assert list(iter_resp_lines(_Chunks(got))) == list(iter_resp_lines(_Chunks(chunks)))


def test_a_chunk_of_a_thousand_events_is_a_thousand_lines_and_str_chunks_are_read_too():
    event = b'{"type":"MODIFIED","object":{"metadata":{"name":"x"}}}\n'
    assert list(whole_lines([event * 1000])) == [event] * 1000
    assert list(whole_lines(["a\nb", "c\n"])) == [b"a\n", b"bc\n"]
