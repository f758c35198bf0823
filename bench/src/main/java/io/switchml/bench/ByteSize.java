package io.switchml.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Tensor sizes with units ("64MiB", "4096", "1.5GB") and ranges ("1MiB:256MiB", doubling). */
public final class ByteSize {
    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([a-zA-Z]*)");

    private ByteSize() {
    }

    /** Bytes of one size: B, KiB/MiB/GiB (powers of 1024; K, M, G too), KB/MB/GB (powers of 1000). */
    public static long parse(String text) {
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("size '" + text + "' is not a number with an optional unit (e.g. 64MiB)");
        }
        double number = Double.parseDouble(m.group(1));
        long unit;
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "":
            case "b":
                unit = 1;
                break;
            case "k":
            case "kib":
                unit = 1L << 10;
                break;
            case "m":
            case "mib":
                unit = 1L << 20;
                break;
            case "g":
            case "gib":
                unit = 1L << 30;
                break;
            case "kb":
                unit = 1_000;
                break;
            case "mb":
                unit = 1_000_000;
                break;
            case "gb":
                unit = 1_000_000_000;
                break;
            default:
                throw new IllegalArgumentException("unknown unit '" + m.group(2) + "' in size '" + text
                        + "'; use B, KiB, MiB, GiB (or KB, MB, GB)");
        }
        return Math.round(number * unit);
    }

    /**
     * The sizes one {@code --size} value names: a single size, or {@code FROM:TO} for FROM, 2 FROM,
     * 4 FROM, ... up to TO, as nccl-tests' {@code -b FROM -e TO -f 2}.
     */
    public static List<Long> parseList(String text) {
        List<Long> sizes = new ArrayList<>();
        for (String part : text.split(",")) {
            int colon = part.indexOf(':');
            if (colon < 0) {
                sizes.add(parse(part));
                continue;
            }
            long from = parse(part.substring(0, colon));
            long to = parse(part.substring(colon + 1));
            if (from < 1 || to < from) {
                throw new IllegalArgumentException("size range '" + part + "' must go from a positive size up");
            }
            for (long s = from; s <= to; s *= 2) {
                sizes.add(s);
            }
        }
        return sizes;
    }

    /** A size for people: 64MiB, 1.5KiB, 12B. */
    public static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return (v == Math.rint(v) ? String.valueOf((long) v) : String.format(Locale.ROOT, "%.1f", v)) + units[u];
    }
}
