/* The hash lab's report page: self-contained HTML (inline CSS and SVG, no script, no network),
 * one bar chart of bytes per member for each policy, with the summary numbers beside it. */
#include <stdio.h>

#include "hash_lab_html.h"
#include "html.h"

int rsw_lab_write_html(const char *path, const char *const *names, const struct rsw_lab_result *res,
		       unsigned n_pol, const struct rsw_lab_traffic *t)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	rsw_html_begin(f, "rocesw hash lab");
	fprintf(f, "<h1>rocesw hash lab</h1>\n<p>%zu packets, %zu flows, %u members</p>\n",
		t->n_pkts, t->n_flows, n_pol ? res[0].n_members : 0);
	fprintf(f, "<table><tr><th>policy</th><th>max/mean</th><th>Jain</th>"
		   "<th>largest flows sharing a member</th></tr>\n");
	for (unsigned p = 0; p < n_pol; p++) {
		fprintf(f, "<tr><td>");
		rsw_html_esc(f, names[p]);
		fprintf(f, "</td><td>%.2f</td><td>%.3f</td><td>%u of %u</td></tr>\n", res[p].max_mean,
			res[p].jain, res[p].fat_flows_colliding, res[p].fat_n);
	}
	fprintf(f, "</table>\n");
	for (unsigned p = 0; p < n_pol; p++) {
		const struct rsw_lab_result *r = &res[p];
		uint64_t max = 1;
		for (unsigned m = 0; m < r->n_members; m++)
			if (r->bytes[m] > max)
				max = r->bytes[m];
		const unsigned w = 24, gap = 6, h = 160;
		unsigned width = r->n_members * (w + gap) + 40;
		fprintf(f, "<h2>");
		rsw_html_esc(f, names[p]);
		fprintf(f, "</h2>\n<svg width=\"%u\" height=\"%u\" role=\"img\" data-policy=\"", width,
			h + 30);
		rsw_html_esc(f, names[p]);
		fprintf(f, "\">\n<line class=\"axis\" x1=\"30\" y1=\"%u\" x2=\"%u\" y2=\"%u\"/>\n", h,
			width, h);
		for (unsigned m = 0; m < r->n_members; m++) {
			unsigned bh = (unsigned)((double)r->bytes[m] / (double)max * (h - 10));
			unsigned x = 34 + m * (w + gap);
			fprintf(f, "<rect class=\"bar\" x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" "
				   "data-member=\"%u\" data-bytes=\"%lu\"><title>member %u: %lu bytes, "
				   "%lu flows</title></rect>\n", x, h - bh, w, bh, m,
				(unsigned long)r->bytes[m], m, (unsigned long)r->bytes[m],
				(unsigned long)r->flows[m]);
			fprintf(f, "<text x=\"%u\" y=\"%u\" font-size=\"10\">%u</text>\n", x + 6, h + 14, m);
		}
		fprintf(f, "</svg>\n");
	}
	fprintf(f, "</body></html>\n");
	return fclose(f) == 0 ? 0 : -1;
}
