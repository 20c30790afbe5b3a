/*
 * stripuser.c - calls libstripped.so (built stripped): 4 x 100 bytes from
 * each of its three static functions, 4 x 50 from its exported one, and
 * 2 x 3 x 70 from the static function stripped_callback returns.
 */
void stripped_work(int n);
void (*stripped_callback(void))(int);

int main(void)
{
	stripped_work(4);
	stripped_callback()(3);
	return 0;
}
