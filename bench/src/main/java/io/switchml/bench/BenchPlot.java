package io.switchml.bench;

import io.switchml.launch.PlotFiles;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The picture of a run, as in SwitchML's README: one PNG with two charts side by side, (a) algbw against tensor size
 * (log 2 axis), one line per algorithm and worker count, and (b) algbw against worker count at the largest size, one
 * line per algorithm. In the rack, a dashed line marks the line rate.
 */
public final class BenchPlot {
    private static final int CHART_WIDTH = 800;
    private static final int HEIGHT = 560;
    private static final String ALGBW = "algbw (Gbit/s)";
    /** Matplotlib's tab10: JFreeChart's default colours include a yellow that is hard to see on white. */
    private static final Color[] COLOURS = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
            new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f),
            new Color(0xbcbd22), new Color(0x17becf)};

    static {
        // Drawing needs no display; without this, AWT may look for one.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private BenchPlot() {
    }

    /** Draws the rows of a run and writes them to {@code file} as PNG. */
    public static void write(List<BenchRow> rows, Path file) {
        if (rows.isEmpty()) {
            throw new BenchException("nothing to plot: the bench produced no rows");
        }
        PlotFiles.requireWritable(file);
        BufferedImage image = new BufferedImage(2 * CHART_WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        bySize(rows).draw(g, new Rectangle2D.Double(0, 0, CHART_WIDTH, HEIGHT));
        byWorkers(rows).draw(g, new Rectangle2D.Double(CHART_WIDTH, 0, CHART_WIDTH, HEIGHT));
        g.dispose();
        try (OutputStream out = Files.newOutputStream(file)) {
            ChartUtils.writeBufferedImageAsPNG(out, image);
        } catch (IOException e) {
            throw PlotFiles.cannotWrite(file, e.toString());
        }
    }

    private static JFreeChart bySize(List<BenchRow> rows) {
        LogAxis x = new LogAxis("tensor size");
        x.setBase(2);
        x.setStandardTickUnits(NumberAxis.createIntegerTickUnits()); // a tick at each power of 2
        x.setNumberFormatOverride(new SizeFormat());
        double smallest = rows.stream().mapToLong(BenchRow::bytes).min().orElseThrow();
        double largest = rows.stream().mapToLong(BenchRow::bytes).max().orElseThrow();
        x.setRange(smallest / Math.sqrt(2), largest * Math.sqrt(2)); // half an octave each side: one size still shows
        return chart("algbw against tensor size", x, rows, r -> r.algo() + " n=" + r.workers(), BenchRow::bytes);
    }

    private static JFreeChart byWorkers(List<BenchRow> rows) {
        long largest = rows.stream().mapToLong(BenchRow::bytes).max().orElseThrow();
        List<BenchRow> atLargest = rows.stream().filter(r -> r.bytes() == largest).toList();
        NumberAxis x = new NumberAxis("workers");
        x.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        int fewest = atLargest.stream().mapToInt(BenchRow::workers).min().orElseThrow();
        int most = atLargest.stream().mapToInt(BenchRow::workers).max().orElseThrow();
        x.setRange(fewest - 0.5, most + 0.5); // one worker count still shows
        return chart("algbw against workers, " + ByteSize.format(largest), x, atLargest, BenchRow::algo,
                BenchRow::workers);
    }

    /** One line per series name, through the rows' (x, algbw) points; y from 0, up to the line rate in the rack. */
    private static JFreeChart chart(String title, ValueAxis x, List<BenchRow> rows, Function<BenchRow, String> series,
                                    Function<BenchRow, Number> xValue) {
        Map<String, XYSeries> lines = new LinkedHashMap<>();
        for (BenchRow r : rows) {
            lines.computeIfAbsent(series.apply(r), XYSeries::new).add(xValue.apply(r), r.algbwGbps());
        }
        XYSeriesCollection data = new XYSeriesCollection();
        lines.values().forEach(data::addSeries);
        NumberAxis y = new NumberAxis(ALGBW);
        double top = rows.stream().mapToDouble(BenchRow::algbwGbps).max().orElseThrow();
        Set<Long> rates = rows.stream().map(BenchRow::rateBps).collect(Collectors.toSet());
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < lines.size(); i++) {
            renderer.setSeriesPaint(i, COLOURS[i % COLOURS.length]);
        }
        XYPlot plot = new XYPlot(data, x, y, renderer);
        if (rates.size() == 1 && !rates.contains(null)) {
            double lineRate = rates.iterator().next() / 1e9;
            ValueMarker marker = new ValueMarker(lineRate, Color.GRAY, new BasicStroke(1.5f, BasicStroke.CAP_BUTT,
                    BasicStroke.JOIN_MITER, 10f, new float[]{6f, 4f}, 0f));
            marker.setLabel("line rate");
            marker.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
            marker.setLabelTextAnchor(TextAnchor.BOTTOM_RIGHT);
            marker.setLabelBackgroundColor(new Color(0, true));
            plot.addRangeMarker(marker);
            top = Math.max(top, lineRate);
        }
        y.setRange(0, top * 1.1);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        return chart;
    }

    /** Tick labels of the size axis in the bench's units: 4KiB, 64MiB. */
    private static final class SizeFormat extends NumberFormat {
        private static final long serialVersionUID = 1L;

        @Override
        public StringBuffer format(double number, StringBuffer to, FieldPosition pos) {
            return to.append(ByteSize.format(Math.round(number)));
        }

        @Override
        public StringBuffer format(long number, StringBuffer to, FieldPosition pos) {
            return to.append(ByteSize.format(number));
        }

        @Override
        public Number parse(String source, ParsePosition pos) {
            throw new UnsupportedOperationException("tick labels are only formatted");
        }
    }
}
