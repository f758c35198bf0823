package io.switchml.bench;

import io.switchml.launch.PlotFiles;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.List;
import java.util.Map;

/** The cost model's picture: all-reduce time against workers, both axes log 10, one line per topology. */
public final class CostPlot {
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 640;
    private static final Color[] COLOURS = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
            new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f)};

    static {
        // Drawing needs no display; without this, AWT may look for one.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private CostPlot() {
    }

    /** Writes {@code seconds} (per topology, (workers, seconds) points) as a PNG to {@code file}. */
    public static void write(String title, Map<CostTopology, List<double[]>> seconds, Path file) {
        if (seconds.values().stream().allMatch(List::isEmpty)) {
            throw new BenchException("nothing to plot: no topology has a point");
        }
        PlotFiles.requireWritable(file);
        XYSeriesCollection data = new XYSeriesCollection();
        seconds.forEach((topology, points) -> {
            XYSeries series = new XYSeries(topology.label());
            points.forEach(p -> series.add(p[0], p[1] * 1e3));
            data.addSeries(series);
        });
        LogAxis x = new LogAxis("workers");
        LogAxis y = new LogAxis("all-reduce time (ms)");
        for (LogAxis axis : List.of(x, y)) {
            axis.setTickUnit(new NumberTickUnit(1)); // one tick per power of 10, written plainly
            axis.setNumberFormatOverride(new DecimalFormat("#,##0.###"));
        }
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            renderer.setSeriesPaint(i, COLOURS[i % COLOURS.length]);
        }
        XYPlot plot = new XYPlot(data, x, y, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        try {
            ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
        } catch (IOException e) {
            throw PlotFiles.cannotWrite(file, e.toString());
        }
    }
}
