/* mish_backward: grad_input = grad_output * (t + self * sigmoid(self) * (1 - t^2)), t = tanh(softplus(self)). */
#define EPT 8   /* elements per work-item */

static kgb_acc_t sigmoid1(kgb_acc_t x)
{
	if (x >= 0)
		return 1 / (1 + exp(-x));
	kgb_acc_t e = exp(x);
	return e / (1 + e);
}
static kgb_acc_t softplus1(kgb_acc_t v)
{
	return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
}
static kgb_acc_t mish_bw1(kgb_acc_t g, kgb_acc_t x)
{
	kgb_acc_t t = tanh(softplus1(x));
	return g * (t + x * sigmoid1(x) * (1 - t * t));
}
#define FN(g, x) mish_bw1((g), (x))

/* grad_output, self and grad_input share one shape; each has its own strides. */
__kernel void mish_backward_k(__global const T_grad_output *grad_output, __global const T_self *self,
                    __global T_grad_input *grad_input, int n, KGB_DIMS(n), KGB_DIMS(g), KGB_DIMS(s), KGB_DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), sg[KGB_KD] = KGB_ARR(g), ss[KGB_KD] = KGB_ARR(s), so[KGB_KD] = KGB_ARR(o);
	kgb_it_t it;
	kgb_it_init(&it, nn, sg, ss, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		kgb_acc_t g = LOAD_grad_output(grad_output, it.off[0]), x = LOAD_self(self, it.off[1]);
		STORE_grad_input(grad_input, it.off[2], FN(g, x));
		kgb_it_next(&it);
	}
}
