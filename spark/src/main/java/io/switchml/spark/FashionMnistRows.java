package io.switchml.spark;

import io.switchml.training.FashionMnist;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Fashion-MNIST as Spark rows: one row per image, {@code label} (int, 0..9) and {@code pixels} (binary, 784 grey
 * levels 0..255 row-major, as in the IDX file). {@link #of} makes the rows on the driver from a split read with the
 * IDX loader; {@link #toSplit} turns a partition back into a split in its task.
 */
public final class FashionMnistRows {
    public static final String LABEL = "label";
    public static final String PIXELS = "pixels";
    public static final StructType SCHEMA = new StructType(new StructField[]{
            DataTypes.createStructField(LABEL, DataTypes.IntegerType, false),
            DataTypes.createStructField(PIXELS, DataTypes.BinaryType, false)});

    private FashionMnistRows() {
    }

    /** The images of {@code split} as a dataset of {@link #SCHEMA}. */
    public static Dataset<Row> of(SparkSession spark, FashionMnist.Split split) {
        List<Row> rows = new ArrayList<>(split.size());
        byte[] pixels = split.pixels();
        for (int i = 0; i < split.size(); i++) {
            byte[] image = new byte[FashionMnist.PIXELS];
            System.arraycopy(pixels, i * FashionMnist.PIXELS, image, 0, FashionMnist.PIXELS);
            rows.add(RowFactory.create((int) split.labels()[i], image));
        }
        return spark.createDataFrame(rows, SCHEMA);
    }

    /** A partition's rows as a split; a row that is not a Fashion-MNIST image is an error naming it. */
    public static FashionMnist.Split toSplit(Iterator<Row> rows) {
        ByteArrayOutputStream pixels = new ByteArrayOutputStream();
        List<Float> labels = new ArrayList<>();
        while (rows.hasNext()) {
            Row row = rows.next();
            int labelField = row.fieldIndex(LABEL);
            int pixelsField = row.fieldIndex(PIXELS);
            if (row.isNullAt(labelField) || row.isNullAt(pixelsField)) {
                throw new IllegalArgumentException("row " + labels.size() + " of the partition has a null label or pixels");
            }
            int label = row.getInt(labelField);
            byte[] image = (byte[]) row.get(pixelsField);
            if (label < 0 || label >= FashionMnist.CLASSES || image.length != FashionMnist.PIXELS) {
                throw new IllegalArgumentException("row " + labels.size() + " of the partition is not a Fashion-MNIST image:"
                        + " label " + label + " (0.." + (FashionMnist.CLASSES - 1) + "), " + image.length + " pixels ("
                        + FashionMnist.PIXELS + ")");
            }
            pixels.writeBytes(image);
            labels.add((float) label);
        }
        float[] l = new float[labels.size()];
        for (int i = 0; i < l.length; i++) {
            l[i] = labels.get(i);
        }
        return new FashionMnist.Split(pixels.toByteArray(), l);
    }
}
