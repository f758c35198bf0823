package io.switchml.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The parameter counts of the models that {@code python/bench/models.py} trains (counted from the models as it
 * builds them: torchvision's, a BERT-base-shaped encoder, a DLRM-shaped recommender), for the cost model's
 * whole-model mode; float32 gradients, so 4 bytes a parameter.
 */
public final class ModelPresets {
    private static final Map<String, Long> PARAMETERS = new LinkedHashMap<>();

    static {
        PARAMETERS.put("resnet18", 11_689_512L);
        PARAMETERS.put("resnet50", 25_557_032L);
        PARAMETERS.put("vgg11", 132_863_336L);
        PARAMETERS.put("vgg16", 138_357_544L);
        PARAMETERS.put("mobilenet_v2", 3_504_872L);
        PARAMETERS.put("bert_base", 109_483_778L);
        PARAMETERS.put("dlrm", 104_819_521L);
    }

    private ModelPresets() {
    }

    /** A preset's parameters, or a plain parameter count ({@code 25000000}, {@code 25M}). */
    public static long parameters(String model) {
        Long known = PARAMETERS.get(model);
        if (known != null) {
            return known;
        }
        try {
            String m = model.strip();
            long scale = m.endsWith("M") ? 1_000_000 : m.endsWith("G") ? 1_000_000_000 : 1;
            long n = Math.round(Double.parseDouble(scale == 1 ? m : m.substring(0, m.length() - 1)) * scale);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // named below
        }
        throw new IllegalArgumentException("unknown model '" + model + "': give one of " + String.join(", ",
                PARAMETERS.keySet()) + ", or a parameter count such as 25.6M");
    }

    public static Iterable<String> names() {
        return PARAMETERS.keySet();
    }
}
