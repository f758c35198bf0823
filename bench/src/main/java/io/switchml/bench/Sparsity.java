package io.switchml.bench;

/**
 * Which rows of a generated tensor hold values ({@link TensorGenerator}); rows are
 * {@link TensorGenerator#ROW_ELEMENTS} elements.
 *
 * @param fraction the fraction of rows that hold values, in (0, 1]; 1 is a dense tensor
 * @param perRank  false: the same rows at every rank (every worker's step touched the same embedding rows, or a
 *                 dense layer among sparse ones); true: each rank draws its own rows (workers touched different
 *                 rows, as an embedding table's gradient does), so the rows holding a value at some rank are about
 *                 {@code 1 - (1 - fraction)^n} of the tensor
 */
public record Sparsity(double fraction, boolean perRank) {
    public static final Sparsity DENSE = new Sparsity(1, false);

    public Sparsity {
        if (!(fraction > 0 && fraction <= 1)) {
            throw new IllegalArgumentException("the fraction of non-zero rows must be in (0, 1], not " + fraction);
        }
    }

    /** {@code same} or {@code per-rank}, as {@code --sparse-rows} spells it. */
    public static boolean perRank(String rows) {
        return switch (rows) {
            case "same" -> false;
            case "per-rank" -> true;
            default -> throw new IllegalArgumentException("--sparse-rows must be same or per-rank, not '" + rows + "'");
        };
    }
}
