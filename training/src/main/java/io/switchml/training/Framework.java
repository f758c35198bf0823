package io.switchml.training;

import java.util.Locale;

/** What trains the model: DJL (with PyTorch), or TensorFlow Java. Both train the same {@link Classifier} perceptron. */
public enum Framework {
    DJL,
    TENSORFLOW;

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Framework named(String name) {
        for (Framework f : values()) {
            if (f.id().equalsIgnoreCase(name == null ? "" : name.trim())) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown framework '" + name + "'; known: djl, tensorflow");
    }

    @Override
    public String toString() {
        return id();
    }
}
