package io.switchml.agent;

import io.switchml.api.ReduceOp;

/**
 * One all-reduce the local process asks for, as the line {@code R ID OFFSET COUNT sum|mean f32|i32}:
 * COUNT elements at byte OFFSET of the shared memory, reduced in place.
 */
record AgentRequest(long id, long offset, long count, ReduceOp op, boolean floats) {
    static AgentRequest parse(String line) {
        String[] f = line.trim().split(" ");
        if (f.length != 6 || !f[0].equals("R")) {
            throw new IllegalArgumentException("malformed request '" + line + "'; expected 'R ID OFFSET COUNT sum|mean f32|i32'");
        }
        ReduceOp op = switch (f[4]) {
            case "sum" -> ReduceOp.SUM;
            case "mean" -> ReduceOp.MEAN;
            default -> throw new IllegalArgumentException("unknown reduction '" + f[4] + "' in '" + line + "'; known: sum, mean");
        };
        boolean floats = switch (f[5]) {
            case "f32" -> true;
            case "i32" -> false;
            default -> throw new IllegalArgumentException("unknown element type '" + f[5] + "' in '" + line + "'; known: f32, i32");
        };
        try {
            return new AgentRequest(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), op, floats);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("malformed number in request '" + line + "'", e);
        }
    }

    /** The request's line, as {@link #parse} reads it. */
    String toLine() {
        return "R " + id + " " + offset + " " + count + " " + (op == ReduceOp.SUM ? "sum" : "mean") + " " + (floats ? "f32" : "i32");
    }
}
