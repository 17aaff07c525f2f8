// Sunflow (Debian sunflow): ray-trace a small scene (three spheres, a
// plane, a point light, diffuse, shiny and glass-like shaders) into a
// display that checksums the pixels.  One render thread, fixed sampling,
// so the result is deterministic.
import org.sunflow.SunflowAPI;
import org.sunflow.core.Display;
import org.sunflow.image.Color;
import org.sunflow.math.Matrix4;
import org.sunflow.math.Point3;
import org.sunflow.math.Vector3;
import org.sunflow.system.UI;
import org.sunflow.system.ui.SilentInterface;

public class SunflowJob {
	static final class Sum implements Display {
		long sum;
		public void imageBegin(int w, int h, int bucketSize) { }
		public void imagePrepare(int x, int y, int w, int h, int id) { }
		public void imageUpdate(int x, int y, int w, int h, Color[] data, float[] alpha) {
			for (int i = 0; i < data.length; i++)
				sum = sum * 31 + data[i].toRGB() + (x * 7 + y);
		}
		public void imageFill(int x, int y, int w, int h, Color c, float alpha) {
			sum = sum * 31 + c.toRGB();
		}
		public void imageEnd() { }
	}

	static void sphere(SunflowAPI api, String name, String shader, float x, float y, float z, float r) {
		api.geometry(name, "sphere");
		api.parameter("shaders", shader);
		api.parameter("transform", Matrix4.translation(x, y, z).multiply(Matrix4.scale(r)));
		api.instance(name + ".instance", name);
	}

	static long job(int size) {
		SunflowAPI api = new SunflowAPI();
		api.parameter("threads", 1);
		api.parameter("resolutionX", size);
		api.parameter("resolutionY", size * 3 / 4);
		api.parameter("aa.min", 0);
		api.parameter("aa.max", 0);
		api.parameter("bucket.size", 16);
		api.options(SunflowAPI.DEFAULT_OPTIONS);

		api.parameter("eye", new Point3(0, 2, -8));
		api.parameter("target", new Point3(0, 0.5f, 0));
		api.parameter("up", new Vector3(0, 1, 0));
		api.parameter("fov", 45f);
		api.parameter("aspect", 4f / 3f);
		api.camera("cam", "pinhole");
		api.parameter("camera", "cam");
		api.options(SunflowAPI.DEFAULT_OPTIONS);

		api.parameter("diffuse", null, 0.8f, 0.2f, 0.2f);
		api.shader("red", "diffuse");
		api.parameter("diffuse", null, 0.2f, 0.3f, 0.8f);
		api.parameter("shiny", 0.4f);
		api.shader("blue", "shiny_diffuse");
		api.parameter("color", null, 0.9f, 0.9f, 0.9f);
		api.shader("mirror", "mirror");
		api.parameter("diffuse", null, 0.7f, 0.7f, 0.7f);
		api.shader("grey", "diffuse");

		sphere(api, "s1", "red", -1.5f, 1, 0, 1);
		sphere(api, "s2", "blue", 1.5f, 1, 0.5f, 1);
		sphere(api, "s3", "mirror", 0, 0.6f, -1.8f, 0.6f);
		api.parameter("center", new Point3(0, 0, 0));
		api.parameter("normal", new Vector3(0, 1, 0));
		api.geometry("floor", "plane");
		api.parameter("shaders", "grey");
		api.instance("floor.instance", "floor");

		api.parameter("center", new Point3(2, 6, -4));
		api.parameter("power", null, 60f, 60f, 60f);
		api.light("lamp", "point");

		Sum d = new Sum();
		api.render(SunflowAPI.DEFAULT_OPTIONS, d);
		return d.sum;
	}

	static long traced(int size) {
		return job(size);
	}

	public static void main(String[] args) {
		int size = args.length > 0 ? Integer.parseInt(args[0]) : 32;
		UI.set(new SilentInterface());
		job(8);
		System.out.println("result " + traced(size));
	}
}
