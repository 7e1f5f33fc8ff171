"""The 1.0 value mutations of the mutation bench: "payload" (bench/mutation/message10.py), "deep" and
"unset" (bench/mutation/fields10.py), and where the planner puts them. No broker: frames are built
with the product's codec, mutated, and decoded again.
"""
from __future__ import annotations

import random

from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec
from amqpspec.wire.amqp10.message import Message, encode_sections
from amqpspec.wire.amqp10.types import Encoded, Int, Symbol, UInt, ULong, UUID

from bench.mutation import fields10, message10
from bench.mutation import mutations as mut
from bench.mutation.plan import plan
from bench.mutation.proxy import ConnLog, Received


def _transfer(payload: bytes, **fields) -> bytes:
    perf = spec.Transfer(handle=UInt(0), delivery_id=UInt(3), delivery_tag=b"t3", message_format=UInt(0), **fields)
    return f10.AMQPFrame(1, perf, payload).encode()


SECTIONS = [spec.Header(durable=False, first_acquirer=True),
            spec.MessageAnnotations({Symbol("x-opt-a"): "text", Symbol("x-opt-i"): Int(7)}),
            spec.Properties(message_id=UUID(int=5), correlation_id=ULong(3)),
            spec.ApplicationProperties({"k2": "v2", "k1": "v1"}),
            spec.Data(b"hello")]
RAW = _transfer(encode_sections(SECTIONS))


def _decoded(raw: bytes) -> tuple[spec.Transfer, list]:
    frame = f10.decode_frame(raw)
    return frame.performative, Message.decode(frame.payload).received


# ------------------------------------------------------------------ payload: decoding and re-encoding
def test_each_variant_changes_one_value_of_the_message_and_nothing_else() -> None:
    perf, before = _decoded(RAW)
    n = message10.leaf_count(RAW)
    assert n >= 12
    changed_sections = set()
    for v in range(n):
        new, note = message10.flip_message(RAW, random.Random(v), v)
        assert note.startswith("transfer payload ")
        after_perf, after = _decoded(new)
        assert after_perf.values() == perf.values()  # the transfer's own fields are untouched
        assert len(after) == len(before)
        diff = [i for i, (a, b) in enumerate(zip(before, after)) if a.encode() != b.encode()]
        assert len(diff) == 1, note  # exactly one section differs
        changed_sections.add(diff[0])
    assert changed_sections == set(range(len(SECTIONS)))  # every section is reached


def test_the_first_variants_reach_every_section_round_robin() -> None:
    notes = [message10.flip_message(RAW, random.Random(0), v)[1] for v in range(len(SECTIONS))]
    heads = [n.split()[2].split("[")[0].split(".")[0] for n in notes]
    assert heads == ["header", "message-annotations", "properties", "application-properties", "data"]


def test_a_header_field_left_out_is_changed_from_its_default() -> None:
    raw = _transfer(encode_sections([spec.Header(), spec.Data(b"no header fields")]))
    notes = []
    for v in range(message10.leaf_count(raw)):
        new, note = message10.flip_message(raw, random.Random(v), v)
        notes.append(note)
        if "delivery-count" in note:
            header = Message.decode(f10.decode_frame(new).payload).header
            assert header.delivery_count is not None and int(header.delivery_count) != 0
    assert any("header.delivery-count UInt(0) ->" in n for n in notes)


def test_a_map_key_is_changed_in_its_place() -> None:
    for v in range(message10.leaf_count(RAW)):
        new, note = message10.flip_message(RAW, random.Random(v), v)
        if note.startswith("transfer payload application-properties key 'k2'"):
            props = Message.decode(f10.decode_frame(new).payload).application_properties.value
            keys = [str(k) for k in props]
            assert keys[1] == "k1" and keys[0] not in ("k1", "k2") and list(props.values()) == ["v2", "v1"]
            return
    raise AssertionError("no variant changed the key k2")


def test_unchanged_octets_stay_as_the_broker_wrote_them() -> None:
    # a non-smallest encoding (str32 where str8 would do) is kept for the values not changed
    props = spec.Properties(message_id=Encoded("abc", "str32-utf8"), subject="subject")
    raw = _transfer(encode_sections([props, spec.Data(b"x")]))
    assert b"\xb1\x00\x00\x00\x03abc" in raw
    assert message10.leaf_count(raw) > 0
    for v in range(message10.leaf_count(raw)):
        new, note = message10.flip_message(raw, random.Random(v), v)
        if "subject" in note:
            assert b"\xb1\x00\x00\x00\x03abc" in new


def test_a_piece_of_a_multi_frame_message_gets_an_octet_of_its_payload_flipped() -> None:
    whole = encode_sections(SECTIONS)
    raw = _transfer(whole[:20], more=True)
    assert message10.leaf_count(raw) == 0 and message10.flip_message(raw, random.Random(1)) is None
    new, note = mut.rewrite("payload", raw, "1.0", seed=3)
    assert "payload octet" in note and len(new) == len(raw)
    diff = [i for i in range(len(raw)) if raw[i] != new[i]]
    assert len(diff) == 1 and diff[0] >= len(raw) - 20


def test_payload_on_other_frames_falls_back_to_a_payload_bit() -> None:
    flow = f10.frame(spec.Flow(next_incoming_id=1, incoming_window=10, next_outgoing_id=1, outgoing_window=10)).encode()
    new, note = mut.rewrite("payload", flow, "1.0", seed=1)
    assert new != flow and len(new) == len(flow) and "bit" in note
    assert mut.payload_values(flow, "1.0") == 0 and mut.payload_values(RAW, "1.0") == message10.leaf_count(RAW)


# ------------------------------------------------------------------ deep and unset
def _attach() -> bytes:
    src = spec.Source(address="q1", outcomes=[Symbol("amqp:accepted:list"), Symbol("amqp:released:list")],
                      default_outcome=spec.Released())
    return f10.frame(spec.Attach(name="link-1", handle=UInt(0), role=True, source=src,
                                 target=spec.Target(address="t"), initial_delivery_count=UInt(0))).encode()


def test_deep_changes_one_value_inside_a_field_and_never_a_top_level_one() -> None:
    raw = _attach()
    before = f10.decode_frame(raw).performative
    n = fields10.count(raw, "deep")
    assert n > 3
    seen = set()
    for v in range(n):
        new, note = mut.rewrite("deep", raw, "1.0", seed=v, variant=v)
        after = f10.decode_frame(new).performative
        assert (after.name, after.handle, after.role) == (before.name, before.handle, before.role)
        assert (after.source.encode() != before.source.encode()) + (after.target.encode() != before.target.encode()) == 1
        seen.add(note.split(" ")[0])
    assert "attach.source.outcomes[0]" in seen and "attach.target.address" in seen


def test_unset_leaves_out_one_field_at_any_depth_but_never_a_set_up_field() -> None:
    flow = f10.frame(spec.Flow(next_incoming_id=UInt(4), incoming_window=10, next_outgoing_id=1, outgoing_window=10,
                               handle=UInt(0), link_credit=UInt(5))).encode()
    new, note = mut.rewrite("unset", flow, "1.0", seed=1, variant=0)
    assert f10.decode_frame(new).performative.next_incoming_id is None and "left out" in note
    end = f10.frame(spec.End(error=spec.Error(condition=Symbol("amqp:session:unattached-handle"),
                                              description="no link on handle 7"))).encode()
    outs = [f10.decode_frame(mut.rewrite("unset", end, "1.0", seed=v, variant=v)[0]).performative
            for v in range(fields10.count(end, "unset"))]
    assert any(o.error is None for o in outs)
    assert any(o.error is not None and o.error.description is None and o.error.condition for o in outs)
    raw = _attach()
    notes = [mut.rewrite("unset", raw, "1.0", seed=v, variant=v)[1] for v in range(fields10.count(raw, "unset"))]
    assert not any(n.startswith("attach.name ") for n in notes)
    assert any(n.startswith("attach.source.default-outcome") for n in notes)


# ------------------------------------------------------------------ planning
def _frame(index: int, seq: int, sort: str, names: tuple[str, ...] = (), values: int = 0, deep: int = 0,
           unset: int = 0) -> Received:
    return Received(index, seq, sort, False, 10, len(names), sort, names, values, deep, unset)


def test_plan_changes_the_message_of_a_recent_transfer_early_and_set_up_fields_last() -> None:
    transfer = ("handle", "delivery-id", "delivery-tag", "message-format")
    log = [ConnLog(1, [_frame(0, 1, "attach", ("name", "handle", "role"), deep=2, unset=3),
                       _frame(1, 2, "transfer", transfer, values=12)])]
    got = [m.describe() for m in plan("amqp10/x/y", log, budget=500)]
    assert got[:4] == ["payload c1#1", "payload c1#1/1", "payload c1#1/2", "payload c1#1/3"]
    assert got[4:7] == ["flip c1#1/1", "flip c1#1/2", "flip c1#1/3"]     # transfer.handle not among them
    assert got.index("dup c1#1") == got.index("fin c1#1") + 1
    assert "deep c1#0" in got and "unset c1#0/2" in got
    assert got[-2:] == ["flip c1#1", "flip c1#0"]                        # transfer.handle, attach.name: last
    assert len([m for m in got if m.startswith("payload c1#1")]) == 10


def test_plan_duplicates_the_latest_frames_and_the_latest_transfers_early() -> None:
    transfer = ("handle", "delivery-id", "delivery-tag", "message-format")
    log = [ConnLog(1, [_frame(0, 1, "transfer", transfer, values=2), _frame(1, 2, "flow", ("next-incoming-id",)),
                       _frame(2, 3, "disposition", ("role", "first")), _frame(3, 4, "flow", ("next-incoming-id",)),
                       _frame(4, 5, "attach", ("name", "handle"))])]
    got = [m.describe() for m in plan("amqp10/x/y", log, budget=500)]
    dups = [m for m in got if m.startswith("dup ")]
    assert dups[:4] == ["dup c1#4", "dup c1#3", "dup c1#2", "dup c1#0"]  # the transfer, four frames back
    assert got.index("dup c1#0") < got.index("drop c1#4")


def test_the_list_says_why_a_reviewed_case_is_not_shown(tmp_path, monkeypatch) -> None:
    import tomllib

    from bench.mutation import report
    from bench.mutation.run import Outcome

    monkeypatch.setitem(report.REVIEWED, "x/1", "right: needs a frame the broker never sends")
    out = [Outcome("x/1", "passed", "", status="not-flipped", why="tolerant"),
           Outcome("x/2", "passed", "", status="not-flipped", why="tolerant")]
    path = tmp_path / "l.toml"
    report.write(path, out, command="cmd", protocol="1.0", broker="B", seed=1, budget=24, wall_s=1.0)
    cases = {c["id"]: c for c in tomllib.loads(path.read_text())["case"]}
    assert cases["x/1"]["reviewed"].startswith("right:") and "reviewed" not in cases["x/2"]
