// Program-model workload: virtual and interface calls with several
// receivers, super calls, private methods, lambdas and method references.
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

public class ModelCalls {
    interface Shape {
        double area();
        default String label() { return "shape"; }
    }

    static abstract class Base implements Shape {
        abstract double scale();
        public double area() { return scale() * unit(); }
        private double unit() { return 1.0; }
    }

    static class Square extends Base {
        final double side;
        Square(double side) { this.side = side; }
        double scale() { return side * side; }
    }

    static class Circle extends Base {
        final double r;
        Circle(double r) { this.r = r; }
        double scale() { return Math.PI * r * r; }
        public String label() { return "circle"; }
    }

    static final class Unit implements Shape {
        public double area() { return 1; }
    }

    static class BigSquare extends Square {
        BigSquare(double side) { super(side); }
        double scale() { return 2 * super.scale(); }
    }

    static double total(Shape[] shapes) {
        double t = 0;
        for (Shape s : shapes)
            t += s.area();
        return t;
    }

    static double viaBase(Base b) {
        return b.scale();
    }

    static int apply(IntUnaryOperator op, int x) {
        return op.applyAsInt(x);
    }

    public static void main(String[] args) {
        Shape[] shapes = { new Square(2), new Circle(1), new Unit(),
                           new BigSquare(3) };
        int k = args.length + 1;
        IntUnaryOperator add = x -> x + k;
        Supplier<String> sup = shapes[1]::label;
        String labels = "";
        for (Shape s : shapes)
            labels += s.label();
        System.out.println(total(shapes) + viaBase(new Square(1)) +
                           apply(add, 3) + apply(Math::abs, -4) +
                           sup.get() + labels);
    }
}
