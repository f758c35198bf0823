package io.switchml.training;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.category.DefaultCategoryDataset;

import java.awt.Color;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The comparison of a set of training runs as one PNG, as the SwitchML paper draws it: time to the target test
 * accuracy against aggregation method, one bar per link rate (or loopback). A run that never reached the target has
 * no bar; the subtitle says which.
 */
public final class TrainPlot {
    private static final Color[] COLOURS = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
            new Color(0xd62728), new Color(0x9467bd)};

    private TrainPlot() {
    }

    public static void write(List<TrainingSummary> runs, Path png) {
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("no training runs to plot");
        }
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        StringBuilder missed = new StringBuilder();
        for (TrainingSummary s : runs) {
            String link = s.rateBps() == null ? "loopback" : rate(s.rateBps());
            double t = s.secondsToTarget();
            data.addValue(Double.isNaN(t) ? null : t, link, s.aggregation());
            if (Double.isNaN(t)) {
                missed.append(missed.length() == 0 ? "not reached: " : ", ").append(s.aggregation()).append(" at ").append(link);
            }
        }
        TrainingSummary first = runs.get(0);
        JFreeChart chart = ChartFactory.createBarChart(String.format(Locale.ROOT, "Time to %.0f %% test accuracy, %d workers,"
                        + " Fashion-MNIST MLP", 100 * first.target(), first.workers()), "aggregation",
                "training seconds to the target (at epoch ends)", data, PlotOrientation.VERTICAL,
                true, false, false);
        if (missed.length() > 0) {
            chart.addSubtitle(new TextTitle(missed.toString()));
        }
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        BarRenderer renderer = (BarRenderer) plot.getRenderer();
        renderer.setBarPainter(new StandardBarPainter());
        renderer.setShadowVisible(false);
        for (int i = 0; i < data.getRowCount(); i++) {
            renderer.setSeriesPaint(i, COLOURS[i % COLOURS.length]);
        }
        chart.setBackgroundPaint(Color.WHITE);
        try {
            ChartUtils.saveChartAsPNG(png.toFile(), chart, 900, 520);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the plot to " + png + ": " + e.getMessage(), e);
        }
    }

    /** 500000000 -> "500 Mbit/s". */
    static String rate(long bps) {
        if (bps % 1_000_000_000L == 0) {
            return bps / 1_000_000_000L + " Gbit/s";
        }
        if (bps % 1_000_000L == 0) {
            return bps / 1_000_000L + " Mbit/s";
        }
        return bps / 1000 + " kbit/s";
    }
}
