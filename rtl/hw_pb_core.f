// The hand-written files of the protobuf core (rtl/, beside this list): the one list every
// tool reads (scripts/test_rtl.sh, scripts/synth.sh, the cocotb testbenches through
// rtl/tb/tbutil.py engine_files, crates/cli's tests). crates/emit embeds the same files in
// verilog::protobuf::SOURCES, and its test fails when the two differ. `heapwire compile
// --rtl` writes them beside the generated <schema>_core.gen.v.
hw_pb_core.v
hw_stream_reader.v
hw_varint_decoder.v
hw_utf8_check.v
hw_pb_writer.v
hw_pb_fields.v
hw_pb_input.v
hw_pb_frames.v
hw_pb_counts.v
hw_pb_insts.v
hw_pb_zeroer.v
