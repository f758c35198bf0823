package io.switchml.deploy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Reads deploy/kubernetes's manifests into fabric8's typed Kubernetes model, strictly: fabric8's classes keep a
 * field they do not know in {@code additionalProperties} instead of failing, so every object read is walked and
 * any such field is an error that names where it is (a misspelt {@code readinessProbe.grpc.prot} would otherwise be
 * dropped by the API server, or refused, only at deployment).
 */
final class Manifests {
    static final Path DIR = Path.of(System.getProperty("switchml.kubernetes.dir", "kubernetes")).toAbsolutePath();

    private static final ObjectMapper YAML = new YAMLMapper();
    private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of(
            "apps/v1 StatefulSet", StatefulSet.class,
            "v1 Service", Service.class,
            "policy/v1 PodDisruptionBudget", PodDisruptionBudget.class,
            "networking.k8s.io/v1 NetworkPolicy", NetworkPolicy.class,
            "batch/v1 Job", Job.class);

    private Manifests() {
    }

    /** The YAML documents of a file, as trees. */
    static List<JsonNode> documents(Path file) throws IOException {
        List<JsonNode> documents = new ArrayList<>();
        try (JsonParser parser = YAML.createParser(file.toFile())) {
            YAML.readValues(parser, JsonNode.class).forEachRemaining(node -> {
                if (node != null && !node.isNull() && !node.isMissingNode()) {
                    documents.add(node);
                }
            });
        }
        return documents;
    }

    /** A Kubernetes object of one of the kinds deploy/kubernetes uses, read strictly. */
    static HasMetadata object(JsonNode document, String where) {
        String kind = document.path("apiVersion").asString() + " " + document.path("kind").asString();
        Class<? extends HasMetadata> type = KINDS.get(kind);
        if (type == null) {
            return strict(document, GenericKubernetesResource.class, where);
        }
        return strict(document, type, where);
    }

    /** The tree as the model class, failing on any field the model does not have. */
    static <T> T strict(JsonNode tree, Class<T> type, String where) {
        T value;
        try {
            value = YAML.treeToValue(tree, type);
        } catch (JacksonException e) {
            throw new AssertionError(where + ": not a " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
        if (!(value instanceof GenericKubernetesResource)) {
            List<String> unknown = new ArrayList<>();
            unknownFields(value, where, unknown);
            if (!unknown.isEmpty()) {
                throw new AssertionError("fields that Kubernetes' " + type.getSimpleName() + " does not have: " + unknown);
            }
        }
        return value;
    }

    /** Every field of the model object (and of the objects in it) that landed in additionalProperties. */
    static void unknownFields(Object value, String path, List<String> unknown) {
        if (value == null) {
            return;
        }
        if (value instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                unknownFields(item, path + "[" + i++ + "]", unknown);
            }
            return;
        }
        if (value instanceof Map<?, ?> map) {
            map.forEach((k, v) -> unknownFields(v, path + "." + k, unknown));
            return;
        }
        if (!value.getClass().getName().startsWith("io.fabric8.")) {
            return;
        }
        for (Method method : value.getClass().getMethods()) {
            if (method.getParameterCount() != 0 || Modifier.isStatic(method.getModifiers())
                    || method.getDeclaringClass() == Object.class) {
                continue;
            }
            String name = method.getName();
            boolean getter = name.startsWith("get") && name.length() > 3;
            if (!getter) {
                continue;
            }
            Object child;
            try {
                child = method.invoke(value);
            } catch (IllegalAccessException | InvocationTargetException e) {
                continue;
            }
            if (name.equals("getAdditionalProperties")) {
                if (child instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    extra.keySet().forEach(k -> unknown.add(path + "." + k));
                }
                continue;
            }
            String field = Character.toLowerCase(name.charAt(3)) + name.substring(4);
            unknownFields(child, path + "." + field, unknown);
        }
    }

    /** The tree as YAML text. */
    static String yaml(Object value) {
        return YAML.writeValueAsString(value);
    }

    static ObjectMapper mapper() {
        return YAML;
    }

    /**
     * Applies a JSON patch (RFC 6902) of the operations kustomize components here use, {@code add} (an array's
     * {@code -} appends) and {@code replace}, to a copy of the tree.
     */
    static JsonNode patch(JsonNode tree, JsonNode operations) {
        JsonNode copy = tree.deepCopy();
        for (JsonNode op : operations) {
            String path = op.path("path").asString();
            int slash = path.lastIndexOf('/');
            JsonNode parent = copy.at(path.substring(0, slash));
            String last = path.substring(slash + 1);
            JsonNode value = op.get("value");
            switch (op.path("op").asString()) {
                case "add" -> {
                    if (parent instanceof ArrayNode array && last.equals("-")) {
                        array.add(value);
                    } else if (parent instanceof ObjectNode object) {
                        object.set(last, value);
                    } else {
                        throw new AssertionError("patch: cannot add at " + path);
                    }
                }
                case "replace" -> {
                    if (!(parent instanceof ObjectNode object) || !object.has(last)) {
                        throw new AssertionError("patch: nothing to replace at " + path);
                    }
                    object.set(last, value);
                }
                default -> throw new AssertionError("patch: operation " + op.path("op") + " is not used here");
            }
        }
        return copy;
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
