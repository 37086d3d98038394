//! The objgraph core's part of its testbench: `heapwire_og_core` with its build
//! parameters, two input read ports (a true dual-port memory), the output memory's
//! whole-word write port, the image limit (`+maximage`) and the header registers, written
//! through the register port before start from `+regs=FILE` (one hex value per class).

use heapwire_schema::CompiledSchema;

use super::{Core, Memories};

/// The build parameters of one objgraph core in its testbench.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    pub memories: Memories,
    /// OBJ_BITS: log2 of the object-pointer table's entries.
    pub obj_bits: u32,
}

const ARGS: &str = "    if (!$value$plusargs(\"maximage=%d\", max_image)) max_image = 64'd1073741824;\n";

const BEFORE_RUN: &str = r#"    if ($value$plusargs("regs=%s", freg)) begin
        $readmemh(freg, regs);
        for (i = 0; i < NCLS; i = i + 1) begin
            hdr_wr_en <= 1'b1; hdr_wr_idx <= i; hdr_wr_data <= regs[i];
            @(posedge clk);
        end
        hdr_wr_en <= 1'b0;
    end
"#;

/// The testbench of the objgraph core that [`crate::verilog::objgraph::generate`]
/// generates for `schema`.
pub fn testbench(schema: &CompiledSchema, p: &Params) -> String {
    let nc = schema.classes.len().max(1);
    let cb = crate::verilog::objgraph::cls_bits(schema);
    let decls = format!(
        "localparam NCLS = {nc};\nreg [63:0] max_image = 0;\nreg hdr_wr_en = 0;\nreg [{cbm}:0] hdr_wr_idx = 0;\nreg [63:0] hdr_wr_data = 0;\n\
         reg [63:0] regs [0:NCLS-1];\nreg [1023:0] freg;\n",
        cbm = cb - 1
    );
    let core = Core {
        title: "the objgraph core heapwire_og_core; header registers from +regs=FILE",
        module: "heapwire_og_core",
        params: format!(".OBJ_BITS({})", p.obj_bits),
        root_port: "root_cls",
        root_bits: cb,
        in_ports: &["in_", "in2_"],
        out_ports: &["out_"],
        byte_enables: false,
        read_port: false,
        decls: &decls,
        conns: ".max_image(max_image), .hdr_wr_en(hdr_wr_en), .hdr_wr_idx(hdr_wr_idx), .hdr_wr_data(hdr_wr_data)",
        port_checks: "",
        args: ARGS,
        before_run: BEFORE_RUN,
        each_cycle: "",
        after_run: "",
    };
    super::testbench(&core, &p.memories)
}
