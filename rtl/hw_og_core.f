// The hand-written files of the objgraph core (rtl/, beside this list): the one list every
// tool reads, as rtl/hw_pb_core.f is the protobuf core's; crates/emit embeds the same files
// in verilog::objgraph::SOURCES, and its test fails when the two differ.
hw_og_core.v
hw_og_reader.v
hw_sdp_ram.v
